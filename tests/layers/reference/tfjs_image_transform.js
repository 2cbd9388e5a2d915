// TensorFlow.js's tf.image.transform (TensorFlow's ImageProjectiveTransform kernel, tfjs-backend-cpu) as a
// second, independent reference of affine_transform: node tfjs_image_transform.js REQUEST.json RESULT.json
// REQUEST {"x": {"shape": [N, H, W, C], "data": [...]}, "transforms": [[8 numbers] per image],
// "interpolation", "fill_mode", "fill_value"}; RESULT {"y": {"shape", "data"}} in (N, H, W, C).
// Each image is transformed in its own call: tfjs 4.22 gives wrong values for images after the first of a
// batch (checked against the NumPy reference; one image at a time agrees within float32 rounding).
// The tfjs folder comes from TORCHFIT_TFJS_DIR (default /var/cache/torchfit/tfjs).
const fs = require('fs');
const dir = process.env.TORCHFIT_TFJS_DIR || '/var/cache/torchfit/tfjs';
const tf = require(dir + '/node_modules/@tensorflow/tfjs');
const req = JSON.parse(fs.readFileSync(process.argv[2]));
const x = tf.tensor4d(req.x.data, req.x.shape);
const ys = [];
for (let b = 0; b < req.x.shape[0]; b++) {
  const image = x.slice([b, 0, 0, 0], [1, -1, -1, -1]);
  ys.push(tf.image.transform(image, tf.tensor2d([req.transforms[b]]), req.interpolation, req.fill_mode,
                             req.fill_value));
}
const y = tf.concat(ys, 0);
fs.writeFileSync(process.argv[3], JSON.stringify({y: {shape: y.shape, data: Array.from(y.dataSync())}}));

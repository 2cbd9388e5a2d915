#!/usr/bin/node
// TensorFlow.js (npm @tensorflow/tfjs, pure JavaScript) as an independent reader of torchfit's TF.js export,
// for tests/keras/keras_save_test.cpp: loads DIR/model.json with its weight shards the way
// tf.loadLayersModel does (its Keras-topology deserializer and weight loader, strict: every weight named),
// and predicts.
//   node tfjs_predict.js DIR REQUEST.json RESULT.json
// REQUEST {"inputs": [{"shape": [N, ...], "data": [...]}]} in Keras's channels-last order; RESULT
// {"outputs": [{"shape", "data"}]}. The module is found through TORCHFIT_TFJS (a folder holding
// node_modules/@tensorflow/tfjs), default /var/cache/torchfit/tfjs. Exit 77 when it is not installed.
const fs = require('fs');
const path = require('path');

const root = process.env.TORCHFIT_TFJS || '/var/cache/torchfit/tfjs';
let tf;
const log = console.log;
console.log = console.warn = () => {};  // the package's banner about tfjs-node (errors still reach stderr)
try {
  tf = require(path.join(root, 'node_modules', '@tensorflow', 'tfjs'));
} catch (e) {
  log('@tensorflow/tfjs is not installed under ' + root + ' (scripts/setup.sh installs it)');
  process.exit(77);
}

async function main() {
  const [dir, reqFile, outFile] = process.argv.slice(2);
  const manifest = JSON.parse(fs.readFileSync(path.join(dir, 'model.json'), 'utf8'));
  const group = manifest.weightsManifest[0];
  const buffers = group.paths.map(p => fs.readFileSync(path.join(dir, p)));
  const all = Buffer.concat(buffers);
  const weightData = all.buffer.slice(all.byteOffset, all.byteOffset + all.byteLength);
  const handler = tf.io.fromMemory({modelTopology: manifest.modelTopology, weightSpecs: group.weights, weightData});
  const model = await tf.loadLayersModel(handler, {strict: true});
  const req = JSON.parse(fs.readFileSync(reqFile, 'utf8'));
  const xs = req.inputs.map(t => tf.tensor(t.data, t.shape, 'float32'));
  let ys = model.predict(xs.length === 1 ? xs[0] : xs);
  if (!Array.isArray(ys)) ys = [ys];
  const outputs = ys.map(y => ({shape: y.shape, data: Array.from(y.dataSync())}));
  fs.writeFileSync(outFile, JSON.stringify({outputs}));
}

main().catch(e => {
  console.error(String(e && e.stack || e));
  process.exit(1);
});

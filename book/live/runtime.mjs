// Loads what a "Try it" box runs, from this site only: onnxruntime-web (wasm backend, one thread,
// so no cross-origin isolation is needed), the models the build exported (recipes/site/web_models.py,
// listed in models/models.json) and the WordPiece vocabulary. Every file is fetched by this
// module, with its progress shown, and handed to onnxruntime as bytes: no CDN, no hub, no
// Cache Storage, no blob: URL. Used by fillmask.mjs (Chapter 4), attention.mjs (Chapter 1) and the
// writing boxes (Chapters 6 and 6b).

import { WordPiece } from './wordpiece.mjs';

const HERE = new URL('./', import.meta.url);
const cache = new Map();

function once(key, make) {
  if (!cache.has(key)) {
    const promise = make();
    cache.set(key, promise);
    promise.catch(() => cache.delete(key)); // a failed load can be tried again
  }
  return cache.get(key);
}

/** Fetch one file of the site as bytes, calling onProgress(received, total) as they come. */
async function download(path, onProgress = () => {}) {
  const url = new URL(path, HERE);
  let response;
  try {
    response = await fetch(url);
  } catch (err) {
    throw new Error(`could not fetch ${url.pathname} (${err.message}); is the site still being served?`);
  }
  if (!response.ok) {
    throw new Error(`${url.pathname} is missing (HTTP ${response.status}): the site was built without its live `
      + 'models; rebuild it with make book');
  }
  const total = Number(response.headers.get('content-length')) || 0;
  const reader = response.body.getReader();
  const chunks = [];
  let received = 0;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    chunks.push(value);
    received += value.length;
    onProgress(received, total);
  }
  const bytes = new Uint8Array(received);
  let offset = 0;
  for (const chunk of chunks) { bytes.set(chunk, offset); offset += chunk.length; }
  return bytes;
}

/** models/models.json: the models' files, sizes and agreement figures, and the pages' examples. */
export function index() {
  return once('index', async () => JSON.parse(new TextDecoder().decode(await download('models/models.json'))));
}

export function tokenizer() {
  return once('vocab', async () => new WordPiece(new TextDecoder().decode(await download('models/vocab.txt'))));
}

/** models.json's record of the model ``name``, or an error that says the site lacks it. */
async function recordOf(name) {
  const { models } = await index();
  if (!models?.[name]) {
    throw new Error(`the site was built without its live model "${name}" (not in models/models.json); `
      + 'rebuild it with make book');
  }
  return models[name];
}

/** The bytes to download before ``name`` can run: the runtime (if not loaded yet) and the model. */
export async function downloadSize(name) {
  const [record, { runtime_bytes: runtime }] = [await recordOf(name), await index()];
  return record.bytes + (cache.has('ort') ? 0 : runtime);
}

function runtime(onProgress) {
  return once('ort', async () => {
    const wasm = await download('ort/ort-wasm-simd-threaded.wasm', onProgress);
    let ort;
    try {
      ort = await import('./ort/ort.wasm.bundle.min.mjs');
    } catch (err) {
      throw new Error(`the runtime (onnxruntime-web) did not load: ${err.message}`);
    }
    ort.env.wasm.numThreads = 1;  // threads need SharedArrayBuffer, i.e. cross-origin isolation
    ort.env.wasm.proxy = false;
    ort.env.wasm.wasmBinary = wasm.buffer;
    return ort;
  });
}

/** A feed's values as the typed array onnxruntime wants for ``type`` (int64 from plain numbers). */
function typed(type, data) {
  if (ArrayBuffer.isView(data)) return data;
  if (type === 'int64') return BigInt64Array.from(data, (x) => BigInt(x));
  if (type === 'float32') return Float32Array.from(data);
  throw new Error(`no feed of type ${type}`);
}

/**
 * The model ``name`` (a key of models.json's "models": "mlm", "diffusion", "causal", "attention")
 * as { run, runNamed, session, record, version }. onProgress(received, total) covers the runtime's
 * and the model's bytes together.
 * - run(ids, types) -> logits [T, V] flat, for the models whose inputs are input_ids,
 *   attention_mask, token_type_ids (int64 [1, T]) and whose output is logits [1, T, V];
 * - runNamed(feeds) -> { output name: { data, dims } }, for any model: feeds maps each input's
 *   name to { type ("int64" or "float32"), data (a typed array or plain numbers), dims }.
 */
export function model(name, onProgress = () => {}) {
  return once(`model:${name}`, async () => {
    const { runtime_bytes: runtimeBytes } = await index();
    const record = await recordOf(name);
    const before = cache.has('ort') ? 0 : runtimeBytes;
    const total = before + record.bytes;
    const ort = await runtime((got) => onProgress(got, total));
    const bytes = await download(`models/${record.file}`, (got) => onProgress(before + got, total));
    let session;
    try {
      session = await ort.InferenceSession.create(bytes, { executionProviders: ['wasm'] });
    } catch (err) {
      throw new Error(`onnxruntime-web could not open ${record.file}: ${err.message}`);
    }
    const runNamed = async (feeds) => {
      const tensors = {};
      for (const [input, { type, data, dims }] of Object.entries(feeds)) {
        tensors[input] = new ort.Tensor(type, typed(type, data), dims);
      }
      const out = await session.run(tensors);
      return Object.fromEntries(Object.entries(out).map(([k, t]) => [k, { data: t.data, dims: t.dims }]));
    };
    const run = async (ids, types) => {
      const dims = [1, ids.length];
      const out = await runNamed({
        input_ids: { type: 'int64', data: ids, dims },
        attention_mask: { type: 'int64', data: ids.map(() => 1), dims },
        token_type_ids: { type: 'int64', data: types || ids.map(() => 0), dims },
      });
      return { data: out.logits.data, length: ids.length, vocab: out.logits.dims[2] };  // [T, V] flat
    };
    return { run, runNamed, session, record, version: ort.env.versions?.web };
  });
}

/** Softmax of row t of a flat [T, V] logits array, in doubles; banned ids get probability 0. */
export function softmaxRow(logits, t, banned = []) {
  const V = logits.vocab;
  const row = new Float64Array(logits.data.subarray(t * V, (t + 1) * V));
  for (const id of banned) row[id] = -Infinity;
  let max = -Infinity;
  for (let i = 0; i < V; i++) if (row[i] > max) max = row[i];
  let sum = 0;
  for (let i = 0; i < V; i++) { row[i] = Math.exp(row[i] - max); sum += row[i]; }
  for (let i = 0; i < V; i++) row[i] /= sum;
  return row;
}

/** A status line with a progress bar, in the box's own element. */
export function progressView(element) {
  element.replaceChildren();
  const label = document.createElement('span');
  const bar = document.createElement('progress');
  bar.max = 1;
  bar.value = 0;
  element.append(label, ' ', bar);
  return {
    set(text, fraction = null) {
      label.textContent = text;
      bar.hidden = fraction === null;
      if (fraction !== null) bar.value = fraction;
    },
  };
}

export const megabytes = (bytes) => `${(bytes / 1e6).toFixed(1)} MB`;

/** Adds the boxes' stylesheet once (pages without JavaScript never need it). */
export function addStyles() {
  if (document.querySelector('link[data-bertlab-live]')) return;
  const link = document.createElement('link');
  link.rel = 'stylesheet';
  link.href = new URL('live.css', HERE).href;
  link.dataset.bertlabLive = '';
  document.head.append(link);
}

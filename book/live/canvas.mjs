// Chapter 6b's canvas: the masked diffusion model writes a definition of a word in a sentence,
// [CLS] word : sentence [SEP] [MASK] x N [SEP], in K passes, in the reader's browser.
// fillCanvas is the twin of book/reference/web_sampler.py fill_canvas, which follows the chapter's
// book/reference/diffusion_sampler.py step for step: tokens_per_step(N, K) commitments per pass,
// the most confident masked positions (LLaDA's low-confidence remasking) or random ones (LLaDA's
// random remasking, each committed token the argmax) drawn from mulberry32, the generator both
// sides share.

import { addStyles, downloadSize, index, megabytes, model, progressView, softmaxRow, tokenizer } from './runtime.mjs';

/** Uniform floats in [0, 1), multiples of 2**-32 (Mulberry32): web_sampler.mulberry32. */
export function mulberry32(seed) {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6D2B79F5) >>> 0;
    let t = Math.imul(a ^ (a >>> 15), a | 1);
    t = (t + Math.imul(t ^ (t >>> 7), t | 61)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** reference.diffusion.tokens_per_step: as even as possible, the earlier steps taking the rest. */
export function tokensPerStep(n, steps) {
  if (steps < 1) throw new Error(`steps must be at least 1, got ${steps}`);
  const base = Math.floor(n / steps);
  const extra = n % steps;
  return Array.from({ length: steps }, (_, i) => base + (i < extra ? 1 : 0));
}

/**
 * A canvas written one pass at a time: [CLS] source [SEP] [MASK] x n [SEP], in `steps` passes of
 * run(ids, types) -> logits [T, V]. `history` holds the steps so far, the first the all-[MASK]
 * canvas: { canvas: the n answer ids, committed: answer positions written at this step, probs }.
 * Each call of step() runs one pass and returns its step (null once every pass has run).
 */
export function canvasWriter(run, tok, sourceIds, n, steps, order = 'confidence', seed = 0) {
  if (order !== 'confidence' && order !== 'random') throw new Error(`order is confidence or random, not ${order}`);
  const counts = tokensPerStep(n, steps);
  const source = sourceIds.slice(0, 40);
  const ids = [tok.cls, ...source, tok.sep, ...Array(n).fill(tok.mask), tok.sep];
  const start = source.length + 2;
  const types = ids.map((_, i) => (i < start ? 0 : 1));  // the answer is segment B, as trained
  const banned = [tok.cls, tok.sep, tok.pad, tok.mask];  // never written
  const draw = mulberry32(seed);
  const history = [{ canvas: ids.slice(start, start + n), committed: [], probs: [] }];
  return {
    history,
    passes: counts.length,
    get done() { return history.length > counts.length; },
    async step() {
      if (this.done) return null;
      const count = counts[history.length - 1];
      const logits = await run(ids, types);
      const masked = ids.flatMap((id, i) => (id === tok.mask ? [i] : []));
      const choice = new Map();
      for (const t of masked) {
        const probs = softmaxRow(logits, t, banned);
        let best = 0;
        for (let i = 1; i < probs.length; i++) if (probs[i] > probs[best]) best = i;
        choice.set(t, { id: best, prob: probs[best] });
      }
      const scores = ids.map(() => (order === 'random' ? draw() : 0));  // one draw per position, as torch.rand
      const score = (t) => (order === 'random' ? scores[t] : choice.get(t).prob);
      const chosen = [...masked].sort((a, b) => score(b) - score(a)).slice(0, count);  // stable: earlier first
      for (const t of chosen) ids[t] = choice.get(t).id;
      const step = { canvas: ids.slice(start, start + n), committed: chosen.map((t) => t - start),
        probs: chosen.map((t) => choice.get(t).prob) };
      history.push(step);
      return step;
    },
  };
}

/**
 * Write n tokens after sourceIds in `steps` passes (every pass of canvasWriter, one after the
 * other). Calls onStep(step) for the first canvas and after each pass; returns the history.
 */
export async function fillCanvas(run, tok, sourceIds, n, steps, order = 'confidence', seed = 0, onStep = () => {}) {
  const writer = canvasWriter(run, tok, sourceIds, n, steps, order, seed);
  onStep(writer.history[0]);
  while (!writer.done) {
    onStep(await writer.step());
    await new Promise((resolve) => setTimeout(resolve, 0));  // let the page draw this step
  }
  return writer.history;
}

function stepRow(tok, step, k, n) {
  const row = document.createElement('tr');
  row.dataset.ids = step.canvas.join(' ');
  row.dataset.committed = step.committed.join(' ');
  const th = document.createElement('th');
  th.scope = 'row';
  th.textContent = k === 0 ? 'start' : `step ${k}`;
  row.append(th);
  const probs = new Map(step.committed.map((p, i) => [p, step.probs[i]]));
  for (let p = 0; p < n; p++) {
    const cell = document.createElement('td');
    const id = step.canvas[p];
    if (probs.has(p)) {
      const mark = document.createElement('mark');
      mark.textContent = tok.token(id);
      const prob = document.createElement('small');
      prob.textContent = ` ${probs.get(p).toFixed(2)}`;
      cell.append(mark, prob);
      cell.className = 'bertlab-live-new';
    } else {
      cell.textContent = id === tok.mask ? '·' : tok.token(id);
    }
    row.append(cell);
  }
  return row;
}

async function mount(box) {
  addStyles();
  const { models, canvas_examples: examples, canvas } = await index();
  const record = models.diffusion;
  box.replaceChildren();
  box.insertAdjacentHTML('beforeend', `
    <p class="bertlab-live-title"><strong>Try it.</strong> The masked diffusion model
      (<code>${record.bertlab_name}</code>, ONNX, weights in ${record.dtype}) writes on the canvas in your
      browser with onnxruntime-web: nothing you type leaves it. <strong>Step</strong> runs one pass,
      <strong>Run all</strong> the rest; changing a setting starts a new canvas.</p>
    <form class="bertlab-live-form">
      <label for="bertlab-canvas-example">An example</label>
      <select id="bertlab-canvas-example"></select>
      <label for="bertlab-canvas-word">Word</label>
      <input id="bertlab-canvas-word" name="word" type="text" autocomplete="off" size="12">
      <label for="bertlab-canvas-sentence">Sentence</label>
      <input id="bertlab-canvas-sentence" name="sentence" type="text" autocomplete="off" size="40">
      <label for="bertlab-canvas-n">N positions</label>
      <input id="bertlab-canvas-n" name="n" type="number" min="1" max="64" value="${canvas.n}">
      <label for="bertlab-canvas-k">K steps</label>
      <input id="bertlab-canvas-k" name="k" type="number" min="1" max="64" value="${canvas.k}">
      <label for="bertlab-canvas-order">Order</label>
      <select id="bertlab-canvas-order" name="order">
        <option value="confidence">most confident first</option><option value="random">random</option></select>
      <label for="bertlab-canvas-seed">Seed (random order)</label>
      <input id="bertlab-canvas-seed" name="seed" type="number" min="0" value="${canvas.seed}">
      <button type="button" id="bertlab-canvas-step">Step</button>
      <button type="submit" id="bertlab-canvas-run">Run all</button>
    </form>
    <p class="bertlab-live-status" role="status" aria-live="polite"></p>
    <div class="bertlab-live-output" tabindex="0" role="region" aria-label="The canvas, one row per step"></div>`);
  const form = box.querySelector('form');
  const example = form.querySelector('#bertlab-canvas-example');
  const status = progressView(box.querySelector('.bertlab-live-status'));
  const output = box.querySelector('.bertlab-live-output');
  examples.forEach(([word, sentence], i) => example.append(new Option(`${word}: ${sentence}`, String(i))));
  let writer = null;  // the canvas being written; a new one after any change of setting
  let grid = null;
  let busy = false;
  let millis = 0;
  const pick = () => { [form.word.value, form.sentence.value] = examples[Number(example.value)]; };
  example.addEventListener('change', pick);
  pick();
  form.addEventListener('input', () => { writer = null; });
  form.addEventListener('change', () => { writer = null; });
  status.set(`The model (${megabytes(await downloadSize('diffusion'))}, with the runtime) downloads from this site `
    + 'when you first press Step or Run all.');
  box.dataset.state = 'idle';

  async function start() {
    const n = Number(form.n.value);
    const k = Math.min(Number(form.k.value), n);
    const [tok, diffusion] = [await tokenizer(), await model('diffusion', (got, total) => status.set(
      `Downloading the model: ${megabytes(got)} of ${megabytes(total)}`, total ? got / total : 0))];
    const source = tok.encodeWithoutSpecials(`${form.word.value} : ${form.sentence.value}`);
    writer = canvasWriter(diffusion.run, tok, source, n, k, form.order.value, Number(form.seed.value));
    writer.tok = tok;
    writer.n = n;
    millis = 0;
    grid = document.createElement('table');
    grid.className = 'bertlab-live-table bertlab-live-canvas';
    grid.insertAdjacentHTML('beforeend', `<caption>${n} masks, ${k} steps, ${form.order.value} order: `
      + 'each step\'s new tokens are highlighted, with their probability</caption>');
    grid.append(stepRow(tok, writer.history[0], 0, n));
    output.replaceChildren(grid);
  }

  async function pass() {
    const started = performance.now();
    const step = await writer.step();
    millis += performance.now() - started;
    grid.append(stepRow(writer.tok, step, writer.history.length - 1, writer.n));
  }

  function report() {
    const done = writer.history.length - 1;
    if (writer.done) {
      status.set(`Written in your browser: ${writer.passes} passes, ${Math.round(millis / writer.passes)} ms each.`);
      box.dataset.state = 'done';
    } else {
      status.set(`Pass ${done} of ${writer.passes}. Step for the next pass, or Run all.`);
      box.dataset.state = 'stepped';
    }
  }

  async function act(all) {
    if (busy) return;
    busy = true;
    box.dataset.state = 'running';
    try {
      if (!writer || writer.done) await start();
      do {
        await pass();
        await new Promise((resolve) => setTimeout(resolve, 0));  // let the page draw this step
      } while (all && !writer.done);
      report();
    } catch (err) {
      writer = null;
      status.set(`The model could not run: ${err.message}`);
      box.dataset.state = 'error';
    } finally {
      busy = false;
    }
  }

  form.querySelector('#bertlab-canvas-step').addEventListener('click', () => act(false));
  form.addEventListener('submit', (event) => {
    event.preventDefault();
    act(true);
  });
}

for (const box of document.querySelectorAll('.bertlab-live[data-live="canvas"]')) {
  mount(box).catch((err) => {
    box.querySelector('.bertlab-live-note')?.append(` (The live model is unavailable: ${err.message})`);
    box.dataset.state = 'error';
  });
}

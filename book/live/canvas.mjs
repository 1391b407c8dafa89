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
 * Write n tokens after sourceIds in `steps` passes of run(ids, types) -> logits [T, V].
 * Calls onStep(step) after each pass; returns the steps, the first the all-[MASK] canvas:
 * { canvas: the n answer ids, committed: answer positions written at this step, probs }.
 */
export async function fillCanvas(run, tok, sourceIds, n, steps, order = 'confidence', seed = 0, onStep = () => {}) {
  if (order !== 'confidence' && order !== 'random') throw new Error(`order is confidence or random, not ${order}`);
  const source = sourceIds.slice(0, 40);
  const ids = [tok.cls, ...source, tok.sep, ...Array(n).fill(tok.mask), tok.sep];
  const start = source.length + 2;
  const types = ids.map((_, i) => (i < start ? 0 : 1));  // the answer is segment B, as trained
  const banned = [tok.cls, tok.sep, tok.pad, tok.mask];  // never written
  const draw = mulberry32(seed);
  const history = [{ canvas: ids.slice(start, start + n), committed: [], probs: [] }];
  onStep(history[0]);
  for (const count of tokensPerStep(n, steps)) {
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
    onStep(step);
    await new Promise((resolve) => setTimeout(resolve, 0));  // let the page draw this step
  }
  return history;
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
      browser with onnxruntime-web: nothing you type leaves it.</p>
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
      <button type="submit">Write</button>
    </form>
    <p class="bertlab-live-status" role="status" aria-live="polite"></p>
    <div class="bertlab-live-output" tabindex="0" role="region" aria-label="The canvas, one row per step"></div>`);
  const form = box.querySelector('form');
  const example = form.querySelector('#bertlab-canvas-example');
  const status = progressView(box.querySelector('.bertlab-live-status'));
  const output = box.querySelector('.bertlab-live-output');
  examples.forEach(([word, sentence], i) => example.append(new Option(`${word}: ${sentence}`, String(i))));
  const pick = () => { [form.word.value, form.sentence.value] = examples[Number(example.value)]; };
  example.addEventListener('change', pick);
  pick();
  status.set(`The model (${megabytes(await downloadSize('diffusion'))}, with the runtime) downloads from this site `
    + 'when you first press Write.');
  box.dataset.state = 'idle';
  form.addEventListener('submit', async (event) => {
    event.preventDefault();
    box.dataset.state = 'running';
    try {
      const n = Number(form.n.value);
      const k = Math.min(Number(form.k.value), n);
      const [tok, diffusion] = [await tokenizer(), await model('diffusion', (got, total) => status.set(
        `Downloading the model: ${megabytes(got)} of ${megabytes(total)}`, total ? got / total : 0))];
      const source = tok.encodeWithoutSpecials(`${form.word.value} : ${form.sentence.value}`);
      const grid = document.createElement('table');
      grid.className = 'bertlab-live-table bertlab-live-canvas';
      grid.insertAdjacentHTML('beforeend', `<caption>${n} masks, ${k} steps, ${form.order.value} order: `
        + 'each step\'s new tokens are highlighted, with their probability</caption>');
      output.replaceChildren(grid);
      const started = performance.now();
      let shown = 0;
      await fillCanvas(diffusion.run, tok, source, n, k, form.order.value, Number(form.seed.value), (step) => {
        grid.append(stepRow(tok, step, shown++, n));
      });
      const ms = Math.round((performance.now() - started) / k);
      status.set(`Written in your browser: ${k} passes, ${ms} ms each.`);
      box.dataset.state = 'done';
    } catch (err) {
      status.set(`The model could not run: ${err.message}`);
      box.dataset.state = 'error';
    }
  });
}

for (const box of document.querySelectorAll('.bertlab-live[data-live="canvas"]')) {
  mount(box).catch((err) => {
    box.querySelector('.bertlab-live-note')?.append(` (The live model is unavailable: ${err.message})`);
    box.dataset.state = 'error';
  });
}

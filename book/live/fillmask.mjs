// Chapter 4's "Try it" box: the course checkpoint fills in [MASK] in the reader's browser.
// The twin of book/reference/web_sampler.py top_fills: a softmax at every [MASK] and its top 5, as
// transformers' fill-mask pipeline computes them on the page. The box replaces the static note
// inside <div class="bertlab-live" data-live="fillmask">, so the page reads the same without it.
// Predict, then run (predict.mjs): the reader may type a guess of the top fill before pressing the
// button, and the box says whether it held (the first of the top 5, or where in the top 5 it is).

import { guessQuestion } from './predict.mjs';
import { addStyles, downloadSize, index, megabytes, model, progressView, softmaxRow, tokenizer } from './runtime.mjs';

const TOP_K = 5;

/** The top k ids and probabilities of one row of probabilities; ties go to the smaller id. */
export function topK(probs, k = TOP_K) {
  const ids = [];
  for (let i = 0; i < probs.length; i++) {
    if (ids.length === k && probs[i] <= probs[ids[k - 1]]) continue;
    let j = Math.min(ids.length, k - 1);
    ids[j] = i;
    for (; j > 0 && probs[ids[j - 1]] < probs[i]; j--) [ids[j - 1], ids[j]] = [ids[j], ids[j - 1]];
  }
  return ids.map((id) => ({ id, prob: probs[id] }));
}

/** For each [MASK] of ``text``: its position and its top fills (ids, tokens, probabilities). */
export async function topFills(text, onProgress) {
  const [tok, mlm] = [await tokenizer(), await model('mlm', onProgress)];
  const ids = tok.encode(text);
  const positions = ids.flatMap((id, i) => (id === tok.mask ? [i] : []));
  if (!positions.length) throw new Error('type [MASK] where the model should fill in a word');
  const logits = await mlm.run(ids);
  return positions.map((position) => ({
    position,
    fills: topK(softmaxRow(logits, position)).map((f) => ({ ...f, token: tok.token(f.id) })),
  }));
}

function table(result, n) {
  const t = document.createElement('table');
  t.className = 'bertlab-live-table';
  t.dataset.position = result.position;
  const caption = document.createElement('caption');
  caption.textContent = n > 1 ? `[MASK] number ${n}` : 'The top 5 fills';
  const head = document.createElement('tr');
  for (const name of ['fill', 'probability']) {
    const th = document.createElement('th');
    th.scope = 'col';
    th.textContent = name;
    head.append(th);
  }
  t.append(caption, head);
  for (const fill of result.fills) {
    const row = document.createElement('tr');
    row.dataset.id = fill.id;
    row.dataset.prob = String(fill.prob);
    const word = document.createElement('td');
    word.textContent = fill.token;
    const prob = document.createElement('td');
    prob.textContent = fill.prob.toFixed(4);
    row.append(word, prob);
    t.append(row);
  }
  return t;
}

/**
 * Whether ``guess`` (a word, lower case) held against one [MASK]'s top fills: { held, rank (1-5,
 * or 0 when not in the top 5), text }. Held means the model's first choice.
 */
export function judgeGuess(guess, fills) {
  const first = `“${fills[0].token}” (${fills[0].prob.toFixed(4)})`;
  const rank = fills.findIndex((f) => f.token === guess) + 1;
  if (rank === 1) return { held: true, rank, text: `You guessed “${guess}”: your prediction held, it is the model's first choice, ${first}.` };
  const where = rank ? `it is the model's choice number ${rank} of ${fills.length}` : `it is not in the model's top ${fills.length}`;
  return { held: false, rank, text: `You guessed “${guess}”: it did not hold; ${where}, and its first is ${first}.` };
}

async function mount(box) {
  addStyles();
  const { models, fill_examples: examples } = await index();
  const record = models.mlm;
  box.replaceChildren();
  box.insertAdjacentHTML('beforeend', `
    <p class="bertlab-live-title"><strong>Try it.</strong> The course checkpoint
      (<code>${record.bertlab_name}</code>, exported to ONNX with its weights in ${record.dtype}) runs in
      your browser with onnxruntime-web: nothing you type leaves it.</p>
    <form class="bertlab-live-form">
      <label for="bertlab-fillmask-text">A sentence with [MASK]</label>
      <input id="bertlab-fillmask-text" name="text" type="text" autocomplete="off" spellcheck="false" size="48">
      <label for="bertlab-fillmask-example">or one of this page's examples</label>
      <select id="bertlab-fillmask-example"></select>
      <button type="submit">Fill in the blank</button>
    </form>
    <p class="bertlab-live-status" role="status" aria-live="polite"></p>
    <div class="bertlab-live-output" aria-live="polite"></div>`);
  const guess = guessQuestion({ id: 'bertlab-fillmask-guess', label: 'Predict first: your guess for the top fill (optional)' });
  const form = box.querySelector('form');
  form.insertBefore(guess.element, form.querySelector('button'));
  box.querySelector('.bertlab-live-status').before(guess.verdict);
  const input = box.querySelector('input');
  const select = box.querySelector('select');
  const status = progressView(box.querySelector('.bertlab-live-status'));
  const output = box.querySelector('.bertlab-live-output');
  for (const text of examples) select.append(new Option(text, text));
  input.value = examples[0];
  select.addEventListener('change', () => { input.value = select.value; guess.clear(); });
  for (const field of [input, guess.input]) field.addEventListener('input', guess.clear);  // a stale verdict goes
  status.set(`The model (${megabytes(await downloadSize('mlm'))}, with the runtime) downloads from this site `
    + 'when you first press the button.');
  box.dataset.state = 'idle';
  box.querySelector('form').addEventListener('submit', async (event) => {
    event.preventDefault();
    box.dataset.state = 'running';
    guess.clear();
    try {
      const started = performance.now();
      const results = await topFills(input.value, (got, total) => status.set(
        `Downloading the model: ${megabytes(got)} of ${megabytes(total)}`, total ? got / total : 0));
      output.replaceChildren(...results.map((r, i) => table(r, results.length > 1 ? i + 1 : 1)));
      if (guess.answer) {
        const { held, rank, text } = judgeGuess(guess.answer, results[0].fills);
        guess.settle(held, results.length > 1 ? `For the first [MASK]: ${text}` : text, String(rank));
      }
      status.set(`Computed in your browser in ${Math.round(performance.now() - started)} ms, from weights `
        + `stored in ${record.dtype}, so a probability can differ slightly from the page's.`);
      box.dataset.state = 'done';
    } catch (err) {
      status.set(`The model could not run: ${err.message}`);
      box.dataset.state = 'error';
    }
  });
}

for (const box of document.querySelectorAll('.bertlab-live[data-live="fillmask"]')) {
  mount(box).catch((err) => {
    box.querySelector('.bertlab-live-note')?.append(` (The live model is unavailable: ${err.message})`);
    box.dataset.state = 'error';
  });
}

// Chapter 6's "Who can write?": three writers on one prompt, side by side, in the reader's browser.
// The course's left-to-right writer (model "causal": the course checkpoint's network under a
// causal mask, trained on the definitions) writes until it predicts [SEP]; BERT is forced to write
// (model "diffusion") by appending [MASK]s, by Gibbs-style resampling or by Mask-Predict; the
// canvas (canvas.mjs) commits its tokens in K passes. Each writer is the twin of a function of
// book/reference/web_sampler.py, step for step, and runs one forward pass per step():
// { history, done, step() }, as canvas.mjs's canvasWriter. Every step is
// { ids: the answer ids after it, committed: the answer positions written, probs: their
// probabilities }, step 0 the start (no pass). All of them write after `word : sentence`, cut to
// 40 tokens, the answer in segment 1, as the canvas does.

import { canvasWriter, mulberry32 } from './canvas.mjs';
import { topK } from './fillmask.mjs';
import { choiceQuestion } from './predict.mjs';
import { addStyles, downloadSize, index, megabytes, model, progressView, softmaxRow, tokenizer } from './runtime.mjs';

/** The first id of the highest probability (numpy's argmax). */
function argmax(probs) {
  let best = 0;
  for (let i = 1; i < probs.length; i++) if (probs[i] > probs[best]) best = i;
  return best;
}

/** Ids and segments of [CLS] source [SEP] answer..., the answer in segment 1. */
function prompt(tok, source, answer) {
  const head = [tok.cls, ...source, tok.sep];
  return { ids: [...head, ...answer], types: [...head.map(() => 0), ...answer.map(() => 1)], start: head.length };
}

/** A writer of at most `passes` steps: `pass(history)` runs one and returns it; `stopped(history)`
 * says when the writer ends before its last pass. */
function stepper(first, passes, pass, stopped = () => false) {
  const history = [first];
  return {
    history,
    passes,
    get done() { return history.length > passes || stopped(history); },
    async step() {
      if (this.done) return null;
      const step = await pass(history);
      history.push(step);
      return step;
    },
  };
}

/**
 * web_sampler.write_left_to_right on model "causal": each pass runs [CLS] source [SEP] written...
 * (no cache), takes the last row and commits its argmax, never [CLS], [PAD] or [MASK]. [SEP] is
 * the writer's own stop: the pass that writes it is the last. At most n passes.
 */
export function decoderWriter(run, tok, sourceIds, n) {
  const source = sourceIds.slice(0, 40);
  const written = [];
  const banned = [tok.cls, tok.pad, tok.mask];
  const writer = stepper({ ids: [], committed: [], probs: [] }, n, async () => {
    const { ids, types } = prompt(tok, source, written);
    const logits = await run(ids, types);
    const probs = softmaxRow(logits, ids.length - 1, banned);
    const id = argmax(probs);
    written.push(id);
    return { ids: written.slice(), committed: [written.length - 1], probs: [probs[id]] };
  }, () => written[written.length - 1] === tok.sep);
  Object.defineProperty(writer, 'stopped', { get: () => written[written.length - 1] === tok.sep });
  return writer;
}

/**
 * web_sampler.force_append (Chapter 6's append_masks_one_at_a_time) on model "diffusion": each pass
 * lays out [CLS] source [SEP] written... [MASK] [SEP] and commits the argmax at the [MASK], never a
 * special token. Exactly n passes: BERT has no stop of its own.
 */
export function appendWriter(run, tok, sourceIds, n) {
  const source = sourceIds.slice(0, 40);
  const written = [];
  const banned = [tok.cls, tok.sep, tok.pad, tok.mask];
  return stepper({ ids: [], committed: [], probs: [] }, n, async () => {
    const { ids, types, start } = prompt(tok, source, [...written, tok.mask, tok.sep]);
    const probs = softmaxRow(await run(ids, types), start + written.length, banned);
    const id = argmax(probs);
    written.push(id);
    return { ids: written.slice(), committed: [written.length - 1], probs: [probs[id]] };
  });
}

/** The canvas [CLS] source [SEP] [MASK] x n [SEP], the answer (and its [SEP]) in segment 1. */
function canvas(tok, sourceIds, n) {
  return prompt(tok, sourceIds.slice(0, 40), [...Array(n).fill(tok.mask), tok.sep]);
}

/**
 * web_sampler.force_gibbs (Chapter 6's gibbs_sample for one prompt, no burn-in, mulberry32's
 * draws for torch's): the first n passes visit the blanks in a Fisher-Yates shuffle of 0..n-1,
 * later passes a blank floor(draw * n). Each pass masks its blank, runs, and draws from the top k
 * tokens of the banned softmax, renormalised: with one draw u, the first of them (most probable
 * first, ties to the smaller id) whose cumulative probability exceeds u * their total.
 */
export function gibbsWriter(run, tok, sourceIds, n, passes = 2 * n, seed = 0, k = 10) {
  const { ids, types, start } = canvas(tok, sourceIds, n);
  const banned = [tok.cls, tok.sep, tok.pad, tok.mask];
  const draw = mulberry32(seed);
  const order = Array.from({ length: n }, (_, i) => i);
  for (let i = n - 1; i >= 1; i--) {
    const j = Math.floor(draw() * (i + 1));
    [order[i], order[j]] = [order[j], order[i]];
  }
  return stepper({ ids: ids.slice(start, start + n), committed: [], probs: [] }, passes, async (history) => {
    const pass = history.length - 1;
    const blank = pass < n ? order[pass] : Math.floor(draw() * n);
    ids[start + blank] = tok.mask;
    const probs = softmaxRow(await run(ids, types), start + blank, banned);
    const top = topK(probs, k).map((c) => c.id);  // most probable first, ties the smaller id
    let total = 0;
    for (const candidate of top) total += probs[candidate];
    const u = draw() * total;
    let id = top[top.length - 1];  // u * total rounded past the sum
    let sum = 0;
    for (const candidate of top) {
      sum += probs[candidate];
      if (sum > u) { id = candidate; break; }
    }
    ids[start + blank] = id;
    return { ids: ids.slice(start, start + n), committed: [blank], probs: [probs[id]] };
  });
}

/**
 * web_sampler.force_mask_predict (Chapter 6's mask_predict for one prompt): the first pass writes
 * every blank's argmax; pass t = 1 .. T - 1 masks again the floor(n (T - t) / T) least confident
 * (ties: the earlier position) and predicts those again. Stops early when that number is 0.
 */
export function maskPredictWriter(run, tok, sourceIds, n, iterations) {
  const { ids, types, start } = canvas(tok, sourceIds, n);
  const banned = [tok.cls, tok.sep, tok.pad, tok.mask];
  const confidence = new Float64Array(n);
  const again = (t) => Math.floor((n * (iterations - t)) / iterations);
  return stepper({ ids: ids.slice(start, start + n), committed: [], probs: [] }, iterations, async (history) => {
    const t = history.length - 1;
    const blanks = t === 0
      ? Array.from({ length: n }, (_, i) => i)
      : Array.from({ length: n }, (_, i) => i).sort((a, b) => confidence[a] - confidence[b]).slice(0, again(t))
        .sort((a, b) => a - b);  // the least confident (stable: ties the earlier), in position order
    for (const b of blanks) ids[start + b] = tok.mask;
    const logits = await run(ids, types);
    const probs = blanks.map((b) => {
      const row = softmaxRow(logits, start + b, banned);
      const id = argmax(row);
      return [id, row[id]];
    });
    blanks.forEach((b, i) => { [ids[start + b], confidence[b]] = probs[i]; });
    return { ids: ids.slice(start, start + n), committed: blanks, probs: probs.map(([, p]) => p) };
  }, (history) => history.length > 1 && again(history.length - 1) === 0);
}

/** canvas.mjs's canvasWriter (confidence order) with its steps as the other writers': ids for canvas. */
export function canvasColumn(run, tok, sourceIds, n, k) {
  const inner = canvasWriter(run, tok, sourceIds, n, Math.min(k, n));
  const as = (s) => ({ ids: s.canvas, committed: s.committed, probs: s.probs });
  const history = [as(inner.history[0])];
  return {
    history,
    passes: inner.passes,
    get done() { return inner.done; },
    async step() {
      const s = await inner.step();
      if (s === null) return null;
      history.push(as(s));
      return history[history.length - 1];
    },
  };
}

/** Pieces to text: "##" pieces join the word before them; a masked position shows as "·". */
export function detokenize(tok, ids) {
  let text = '';
  for (const id of ids) {
    const piece = id === tok.mask ? '·' : tok.token(id);
    text += piece.startsWith('##') ? piece.slice(2) : (text ? ' ' : '') + piece;
  }
  return text;
}

// The box ------------------------------------------------------------------------------------

const FORCED = {
  append: 'one [MASK] appended at a time',
  gibbs: 'Gibbs-style resampling',
  maskpredict: 'Mask-Predict',
};
const COLUMNS = ['decoder', 'forced', 'canvas'];
const CHOICES = { decoder: 'the left-to-right writer', forced: 'BERT, forced', canvas: 'the canvas', tie: 'a tie' };

function column(name, title) {
  const section = document.createElement('div');
  section.className = 'bertlab-writers-column';
  section.dataset.writer = name;
  section.setAttribute('role', 'group');
  section.setAttribute('aria-labelledby', `bertlab-writers-${name}-title`);
  section.innerHTML = `<p class="bertlab-writers-title" id="bertlab-writers-${name}-title"></p>
    <p class="bertlab-writers-text"></p>
    <p class="bertlab-writers-count"></p>
    <table class="bertlab-live-table bertlab-writers-steps">
      <caption>Each pass's new tokens, with their probability</caption>
      <tr><th scope="col">pass</th><th scope="col">written</th></tr>
    </table>`;
  section.querySelector('.bertlab-writers-title').textContent = title;
  return section;
}

function stepRow(tok, step, k) {
  const row = document.createElement('tr');
  row.dataset.ids = step.ids.join(' ');
  row.dataset.committed = step.committed.join(' ');
  row.dataset.probs = step.probs.join(' ');
  const th = document.createElement('th');
  th.scope = 'row';
  th.textContent = String(k);
  const td = document.createElement('td');
  step.committed.forEach((p, i) => {
    if (i) td.append(' ');
    const mark = document.createElement('mark');
    mark.textContent = tok.token(step.ids[p]);
    const prob = document.createElement('small');
    prob.textContent = ` ${step.probs[i].toFixed(2)}`;
    td.append(mark, prob);
  });
  row.append(th, td);
  return row;
}

async function mount(box) {
  addStyles();
  const { models, writer_examples: shown, canvas_examples: canvasExamples, writers } = await index();
  const examples = shown || canvasExamples;
  const settings = { n: 12, k: 6, iterations: 6, gibbs_passes: 24, seed: 0, ...writers };
  for (const name of ['causal', 'diffusion']) {
    if (!models[name]) {
      throw new Error(`models/models.json lists no "${name}" model: the site was built before this box; `
        + 'rebuild it with make book');
    }
  }
  const big = models.causal.bytes > 150e6 ? ` (downloads ${megabytes(models.causal.bytes)})` : '';
  box.replaceChildren();
  box.insertAdjacentHTML('beforeend', `
    <p class="bertlab-live-title"><strong>Try it.</strong> Three writers continue the same prompt in
      your browser with onnxruntime-web (nothing you type leaves it): the course's left-to-right
      writer (<code>${models.causal.bertlab_name}</code>), BERT forced to write
      (<code>${models.diffusion.bertlab_name}</code>) and the canvas (the same weights). <strong>Step</strong>
      runs one forward pass in every column not finished, <strong>Run all</strong> the rest; changing a
      setting starts over.</p>
    <form class="bertlab-live-form bertlab-writers-form">
      <label for="bertlab-writers-example">An example</label>
      <select id="bertlab-writers-example"></select>
      <label for="bertlab-writers-word">Word</label>
      <input id="bertlab-writers-word" name="word" type="text" autocomplete="off" size="12">
      <label for="bertlab-writers-sentence">Sentence</label>
      <input id="bertlab-writers-sentence" name="sentence" type="text" autocomplete="off" size="40">
      <label for="bertlab-writers-n">Budget n (tokens)</label>
      <input id="bertlab-writers-n" name="n" type="number" min="1" max="48" value="${settings.n}">
      <label for="bertlab-writers-method">BERT forced by</label>
      <select id="bertlab-writers-method" name="forced">
        ${Object.entries(FORCED).map(([v, t]) => `<option value="${v}">${t}</option>`).join('')}
      </select>
      <label for="bertlab-writers-gibbs" data-for="gibbs">Gibbs passes</label>
      <input id="bertlab-writers-gibbs" name="gibbs" type="number" min="1" max="200" value="${settings.gibbs_passes}" data-for="gibbs">
      <label for="bertlab-writers-seed" data-for="gibbs">Seed</label>
      <input id="bertlab-writers-seed" name="seed" type="number" min="0" value="${settings.seed}" data-for="gibbs">
      <label for="bertlab-writers-iterations" data-for="maskpredict">Mask-Predict iterations T</label>
      <input id="bertlab-writers-iterations" name="iterations" type="number" min="1" max="48" value="${settings.iterations}" data-for="maskpredict">
      <label for="bertlab-writers-k">Canvas passes K</label>
      <input id="bertlab-writers-k" name="k" type="number" min="1" max="48" value="${settings.k}">
      <span class="bertlab-writers-question"></span>
      <button type="button" id="bertlab-writers-step">Step${big}</button>
      <button type="submit" id="bertlab-writers-run">Run all${big}</button>
    </form>
    <p class="bertlab-live-status" role="status" aria-live="polite"></p>
    <span class="bertlab-writers-verdict"></span>
    <div class="bertlab-writers-columns"></div>`);
  const form = box.querySelector('form');
  const example = form.querySelector('#bertlab-writers-example');
  const status = progressView(box.querySelector('.bertlab-live-status'));
  const question = choiceQuestion({
    id: 'bertlab-writers-predict',
    legend: 'Before you run: which column finishes in the fewest forward passes?',
    choices: Object.entries(CHOICES).map(([value, label]) => ({ value, label })),
  });
  box.querySelector('.bertlab-writers-question').replaceWith(question.element);
  box.querySelector('.bertlab-writers-verdict').replaceWith(question.verdict);
  const output = box.querySelector('.bertlab-writers-columns');
  examples.forEach(([word, sentence], i) => example.append(new Option(`${word}: ${sentence}`, String(i))));
  const pick = () => { [form.word.value, form.sentence.value] = examples[Number(example.value)]; };
  const showFields = () => {
    for (const el of form.querySelectorAll('[data-for]')) el.hidden = el.dataset.for !== form.forced.value;
  };
  example.addEventListener('change', pick);
  form.forced.addEventListener('change', showFields);
  pick();
  showFields();
  let run = null;  // { tok, writers: {decoder, forced, canvas}, views, n }; a new one after any change of setting
  let busy = false;
  const restart = (event) => { if (event.target.name !== question.element.id) run = null; };
  form.addEventListener('input', restart);
  form.addEventListener('change', restart);
  const runtimeBytes = (await downloadSize('causal')) - models.causal.bytes;
  status.set(`The two models (the writer ${megabytes(models.causal.bytes)}, BERT ${megabytes(models.diffusion.bytes)}; `
    + `${megabytes(models.causal.bytes + models.diffusion.bytes + runtimeBytes)} with the runtime) download from this `
    + 'site when you first press Step or Run all.');
  box.dataset.state = 'idle';

  async function load(name, what) {
    return model(name, (got, total) => status.set(
      `Downloading ${what}: ${megabytes(got)} of ${megabytes(total)}`, total ? got / total : 0));
  }

  async function start() {
    const n = Number(form.n.value);
    const tok = await tokenizer();
    const causal = await load('causal', 'the left-to-right writer');
    const diffusion = await load('diffusion', 'BERT');
    const source = tok.encodeWithoutSpecials(`${form.word.value} : ${form.sentence.value}`);
    const method = form.forced.value;
    const forced = {
      append: () => appendWriter(diffusion.run, tok, source, n),
      gibbs: () => gibbsWriter(diffusion.run, tok, source, n, Number(form.gibbs.value), Number(form.seed.value)),
      maskpredict: () => maskPredictWriter(diffusion.run, tok, source, n, Number(form.iterations.value)),
    }[method]();
    const k = Math.min(Number(form.k.value), n);
    run = {
      tok, n, method,
      writers: { decoder: decoderWriter(causal.run, tok, source, n), forced, canvas: canvasColumn(diffusion.run, tok, source, n, k) },
      views: {
        decoder: column('decoder', 'The left-to-right writer'),
        forced: column('forced', `BERT, forced: ${FORCED[method]}`),
        canvas: column('canvas', `The canvas, K = ${k}`),
      },
      millis: 0,
      passes: 0,
    };
    output.replaceChildren(...COLUMNS.map((c) => run.views[c]));
    for (const c of COLUMNS) show(c);
    question.clear();
    delete box.dataset.prediction;
  }

  function ending(c) {
    const writer = run.writers[c];
    if (!writer.done) return 'writing';
    if (c === 'decoder' && writer.stopped) return 'stopped by itself at [SEP]';
    if (c === 'forced' && run.method === 'gibbs') return `all ${writer.passes} passes run (budget of ${run.n} tokens)`;
    if (c === 'forced' && run.method === 'maskpredict') return `budget of ${run.n} tokens used, in ${writer.history.length - 1} iterations`;
    return `budget of ${run.n} tokens used`;
  }

  function show(c) {
    const writer = run.writers[c];
    const view = run.views[c];
    const last = writer.history[writer.history.length - 1];
    const passes = writer.history.length - 1;
    view.dataset.passes = String(passes);
    view.dataset.done = String(writer.done);
    const ids = c === 'decoder' && writer.stopped ? last.ids.slice(0, -1) : last.ids;
    view.querySelector('.bertlab-writers-text').textContent = ids.length ? detokenize(run.tok, ids) : '(nothing yet)';
    view.querySelector('.bertlab-writers-count').textContent = `${passes} forward ${passes === 1 ? 'pass' : 'passes'}: ${ending(c)}`;
    if (passes) view.querySelector('table').append(stepRow(run.tok, last, passes));
  }

  async function pass() {
    for (const c of COLUMNS) {
      if (run.writers[c].done) continue;
      const started = performance.now();
      await run.writers[c].step();
      run.millis += performance.now() - started;
      run.passes += 1;
      show(c);
    }
  }

  const finished = () => COLUMNS.every((c) => run.writers[c].done);

  function reveal() {
    const counts = Object.fromEntries(COLUMNS.map((c) => [c, run.writers[c].history.length - 1]));
    const fewest = Math.min(...Object.values(counts));
    const winners = COLUMNS.filter((c) => counts[c] === fewest);
    const said = winners.length > 1
      ? `a tie: ${winners.map((c) => CHOICES[c]).join(' and ')}, ${fewest} passes each`
      : `${CHOICES[winners[0]]}, in ${fewest} passes`;
    const held = question.settle(winners.length > 1 ? 'tie' : winners[0], `Fewest forward passes: ${said}.`);
    box.dataset.prediction = { true: 'held', false: 'missed', null: 'none' }[held];
  }

  async function act(all) {
    if (busy || !form.reportValidity()) return;  // Run all's submit has checked the fields already
    if (all && question.answer === null) {
      status.set('First predict: which column finishes in the fewest forward passes? Then press Run all.');
      box.dataset.state = 'asking';
      question.element.querySelector('input').focus();
      return;
    }
    busy = true;
    box.dataset.state = 'running';
    try {
      if (!run || finished()) await start();
      do {
        await pass();
        await new Promise((resolve) => setTimeout(resolve, 0));  // let the page draw this pass
      } while (all && !finished());
      if (finished()) {
        status.set(`Written in your browser: ${run.passes} forward passes in all, ${Math.round(run.millis / run.passes)} ms each.`);
        reveal();
        box.dataset.state = 'done';
      } else {
        const counts = COLUMNS.map((c) => run.writers[c].history.length - 1);
        status.set(`Passes so far: ${counts.join(', ')}. Step for the next pass, or Run all.`);
        box.dataset.state = 'stepped';
      }
    } catch (err) {
      run = null;
      status.set(`The models could not run: ${err.message}`);
      box.dataset.state = 'error';
    } finally {
      busy = false;
    }
  }

  form.querySelector('#bertlab-writers-step').addEventListener('click', () => act(false));
  form.addEventListener('submit', (event) => {
    event.preventDefault();
    act(true);
  });
}

for (const box of document.querySelectorAll('.bertlab-live[data-live="writers"]')) {
  mount(box).catch((err) => {
    const note = box.querySelector('.bertlab-live-note');
    if (note) note.append(` (The live models are unavailable: ${err.message})`);
    else box.textContent = `The live models are unavailable: ${err.message}`;
    box.dataset.state = 'error';
  });
}

// Chapter 1's "Try it" box: one attention head of the course checkpoint's encoder, under BERT's
// bidirectional mask and under a causal mask, in the reader's browser. The "attention" model
// (recipes/site/web_models.py) takes input_ids, token_type_ids and Chapter 1's additive 4-D mask,
// attention_bias [1, 1, T, T] (0 where query i may attend to key j, -1e9 where not), and returns
// every head's weights, attentions [L, H, T, T], and the last layer's vectors, hidden [T, Hd].
// Then predict, then run (predict.mjs): edit the last word, and say which tokens' vectors change
// under each mask; the box measures it as the chapter's relative_change does, ||a - b|| / ||a||
// per token. attentionBias and relativeChange are the twins of book/reference/web_sampler.py
// attention_bias and relative_change, which wrote the reference file the browser tests hold the
// box to. The box replaces the static note inside
// <div class="bertlab-live" data-live="attention">, so the page reads the same without it.

import { choiceQuestion } from './predict.mjs';
import { addStyles, downloadSize, index, megabytes, model, progressView, tokenizer } from './runtime.mjs';

export const MASKS = ['bidirectional', 'causal'];
/** What the mask adds where attention is not allowed (Chapter 1 adds float32's lowest value; -1e9
 * is exact in float32 and gives the same weight, exactly 0): web_sampler.attention_bias. */
export const BLOCKED = -1e9;
/** A token "moved" when its vector changed by more than this share of its length (the chapter's
 * check: every bidirectional change is above it, every causal change before the edit far below). */
export const MOVED = 1e-4;
/** The page's pair, for a site whose models.json predates the box's examples. */
const PAIR = ['The bank by the river was flooded.', 'The bank by the river was robbed.'];
const MAX_TOKENS = 64;  // two T x T tables stay readable
const OUTCOMES = [
  { value: 'none', label: 'none of them' },
  { value: 'edited', label: 'only the edited word and the tokens after it' },
  { value: 'all', label: 'all of them, the earlier words too' },
];

/** Chapter 1's additive mask for T tokens as a flat [T, T]: 0 where query i may see key j. */
export function attentionBias(T, mask) {
  if (!MASKS.includes(mask)) throw new Error(`mask is bidirectional or causal, not ${mask}`);
  const bias = new Float32Array(T * T);
  if (mask === 'causal') for (let i = 0; i < T; i++) bias.fill(BLOCKED, i * T + i + 1, (i + 1) * T);
  return bias;
}

const results = new Map();  // `${mask}:${ids}` -> a run's result: the box's answers are computed once

/**
 * The attention model on ``ids`` under ``mask``: { attentions (Float32Array [L, H, T, T] flat),
 * hidden (Float32Array [T, Hd] flat), L, H, T, Hd }.
 */
export async function attend(ids, mask, onProgress) {
  const key = `${mask}:${ids.join(',')}`;
  if (!results.has(key)) {
    const attention = await model('attention', onProgress);
    const T = ids.length;
    const out = await attention.runNamed({
      input_ids: { type: 'int64', data: ids, dims: [1, T] },
      token_type_ids: { type: 'int64', data: ids.map(() => 0), dims: [1, T] },
      attention_bias: { type: 'float32', data: attentionBias(T, mask), dims: [1, 1, T, T] },
    });
    const [L, H] = out.attentions.dims;
    results.set(key, { attentions: out.attentions.data, hidden: out.hidden.data, L, H, T, Hd: out.hidden.dims[1] });
  }
  return results.get(key);
}

/** One head's weights as rows: [T][T], row i the query token, column j the key token. */
export function headWeights(result, layer, head) {
  const { H, T, attentions } = result;
  const start = (layer * H + head) * T * T;
  return Array.from({ length: T }, (_, i) => Array.from(attentions.subarray(start + i * T, start + (i + 1) * T)));
}

/** ``text`` tokenized, [CLS] and [SEP] included; { ids, tokens }. */
export async function encode(text) {
  const tok = await tokenizer();
  const ids = tok.encode(text);
  if (ids.length > MAX_TOKENS) throw new Error(`the sentence has ${ids.length} tokens; the box shows at most ${MAX_TOKENS}`);
  return { ids, tokens: ids.map((id) => tok.token(id)) };
}

/** Both masks' results for ``text``: { ids, tokens, bidirectional, causal }. */
export async function attentionMaps(text, onProgress) {
  const { ids, tokens } = await encode(text);
  const maps = { ids, tokens };
  for (const mask of MASKS) maps[mask] = await attend(ids, mask, onProgress);
  return maps;
}

/** Chapter 1's relative_change, in doubles: ||a_t - b_t|| / ||a_t|| for each of T rows of Hd. */
export function relativeChange(a, b, T, Hd) {
  return Array.from({ length: T }, (_, t) => {
    let diff = 0;
    let norm = 0;
    for (let k = t * Hd; k < (t + 1) * Hd; k++) {
      diff += (a[k] - b[k]) ** 2;
      norm += a[k] ** 2;
    }
    return Math.sqrt(diff) / Math.sqrt(norm);
  });
}

/** ``text`` with its last word (letters, digits, apostrophes, hyphens) replaced by ``word``. */
export function withLastWord(text, word) {
  const match = /[\p{L}\p{N}'’-]+(?=[^\p{L}\p{N}]*$)/u.exec(text);
  if (!match) throw new Error('the sentence has no word to edit');
  return text.slice(0, match.index) + word.trim() + text.slice(match.index + match[0].length);
}

/** Which tokens moved: "none", "edited" (only from ``changedFrom`` on), "all", or "other". */
export function outcome(moved, changedFrom, threshold = MOVED) {
  const did = moved.map((m) => m > threshold);
  if (!did.some(Boolean)) return 'none';
  if (did.every(Boolean)) return 'all';
  if (!did.slice(0, changedFrom).some(Boolean)) return 'edited';
  return 'other';
}

/**
 * The two sentences through the model under both masks: { ids: [a, b], tokens: [a, b],
 * changedFrom (the first differing position), moved: { mask: [T] }, outcome: { mask: ... } }.
 * Throws when they differ in length (a new word of another number of pieces) or not at all.
 */
export async function edits(textA, textB, onProgress) {
  const [a, b] = [await encode(textA), await encode(textB)];
  const changedFrom = a.ids.findIndex((id, i) => id !== b.ids[i]);
  if (a.ids.length !== b.ids.length) {
    throw new Error(`the two sentences have ${a.ids.length} and ${b.ids.length} tokens, so their positions do not `
      + 'line up: choose a new last word of as many word pieces as the old one');
  }
  if (changedFrom < 0) throw new Error('the two sentences are the same: type a different last word');
  const result = { ids: [a.ids, b.ids], tokens: [a.tokens, b.tokens], changedFrom, moved: {}, outcome: {} };
  for (const mask of MASKS) {
    const [x, y] = [await attend(a.ids, mask, onProgress), await attend(b.ids, mask, onProgress)];
    result.moved[mask] = relativeChange(x.hidden, y.hidden, x.T, x.Hd);
    result.outcome[mask] = outcome(result.moved[mask], changedFrom);
  }
  return result;
}

const NAMES = { bidirectional: "BERT's bidirectional mask", causal: 'a causal mask' };
const CAPTIONS = { bidirectional: 'Bidirectional (BERT)', causal: "Causal (a decoder's)" };

function heatTable(tokens, weights, mask, layer, head) {
  const t = document.createElement('table');
  t.className = 'bertlab-live-table bertlab-live-heat';
  Object.assign(t.dataset, { mask, layer, head });
  const caption = document.createElement('caption');
  caption.textContent = `${CAPTIONS[mask]}: layer ${layer + 1}, head ${head + 1}`;
  const top = document.createElement('tr');
  const corner = document.createElement('th');
  corner.scope = 'col';
  corner.className = 'bertlab-live-corner';
  corner.textContent = 'query \\ key';
  top.append(corner);
  for (const token of tokens) {
    const th = document.createElement('th');
    th.scope = 'col';
    th.textContent = token;
    top.append(th);
  }
  t.append(caption, top);
  weights.forEach((row, i) => {
    const tr = document.createElement('tr');
    tr.dataset.query = i;
    const th = document.createElement('th');
    th.scope = 'row';
    th.textContent = tokens[i];
    tr.append(th);
    row.forEach((w, j) => {
      const td = document.createElement('td');
      td.dataset.weight = String(w);
      td.style.setProperty('--w', Math.min(1, Math.max(0, w)).toFixed(4));
      const text = document.createElement('span');
      text.className = 'bertlab-live-sr';
      if (mask === 'causal' && j > i) {
        td.className = 'bertlab-live-masked';
        text.textContent = 'masked';
      } else {
        text.textContent = w.toFixed(2);
      }
      td.append(text);
      tr.append(td);
    });
    t.append(tr);
  });
  return t;
}

/** A relative change as the table shows it: 0, a power of ten for rounding's size, else 3 decimals. */
const share = (x) => (x === 0 ? '0' : x < 1e-3 ? x.toExponential(1) : x.toFixed(3));

function movedTable(result) {
  const t = document.createElement('table');
  t.className = 'bertlab-live-table bertlab-live-moved';
  t.dataset.changedFrom = result.changedFrom;
  t.insertAdjacentHTML('beforeend', '<caption>How far each token\'s final vector moved (relative change, '
    + '||a − b|| / ||a||); the edited positions are marked</caption>');
  const head = document.createElement('tr');
  for (const name of ['position', 'token', 'bidirectional', 'causal']) {
    const th = document.createElement('th');
    th.scope = 'col';
    th.textContent = name;
    head.append(th);
  }
  t.append(head);
  const [a, b] = result.tokens;
  a.forEach((token, i) => {
    const tr = document.createElement('tr');
    tr.dataset.position = i;
    const th = document.createElement('th');
    th.scope = 'row';
    th.textContent = String(i);
    const word = document.createElement('td');
    word.textContent = token === b[i] ? token : `${token} / ${b[i]}`;
    if (i >= result.changedFrom) tr.className = 'bertlab-live-edited';
    tr.append(th, word);
    for (const mask of MASKS) {
      const moved = result.moved[mask][i];
      tr.dataset[`moved${mask[0].toUpperCase()}${mask.slice(1)}`] = String(moved);
      const td = document.createElement('td');
      td.textContent = share(moved);
      tr.append(td);
    }
    t.append(tr);
  });
  return t;
}

/** What the measurement shows, in words, for a verdict line. */
function explain(result, mask) {
  const span = (xs) => {
    const [lo, hi] = [Math.min(...xs), Math.max(...xs)];
    return lo === hi ? share(lo) : `${share(lo)} to ${share(hi)}`;
  };
  const from = result.changedFrom;
  return `The tokens before position ${from} moved by ${span(result.moved[mask].slice(0, from))} of their length; `
    + `from position ${from} on, by ${span(result.moved[mask].slice(from))}.`;
}

function fillSelect(select, n) {
  const keep = Number(select.value) || 0;
  select.replaceChildren(...Array.from({ length: n }, (_, i) => new Option(String(i + 1), String(i))));
  select.value = String(Math.min(keep, n - 1));
  select.disabled = false;
}

async function mount(box) {
  addStyles();
  const info = await index();
  const record = info.models?.attention;
  const size = await downloadSize('attention');  // a clear error if the site lacks the model
  const examples = info.attention_examples ?? PAIR;
  box.replaceChildren();
  box.insertAdjacentHTML('beforeend', `
    <p class="bertlab-live-title"><strong>Try it.</strong> The course checkpoint's encoder
      (<code>${record.bertlab_name ?? 'attention'}</code>, ONNX, weights in ${record.dtype}) runs in your
      browser with onnxruntime-web, twice: under BERT's bidirectional mask and under a causal mask. Nothing
      you type leaves it.</p>
    <form class="bertlab-live-form" id="bertlab-attention-form">
      <label for="bertlab-attention-text">A sentence</label>
      <input id="bertlab-attention-text" name="text" type="text" autocomplete="off" spellcheck="false" size="40">
      <label for="bertlab-attention-example">or one of this page's examples</label>
      <select id="bertlab-attention-example"></select>
      <span class="bertlab-live-field"><label for="bertlab-attention-layer">Layer</label>
        <select id="bertlab-attention-layer" name="layer" disabled><option value="0">1</option></select></span>
      <span class="bertlab-live-field"><label for="bertlab-attention-head">Head</label>
        <select id="bertlab-attention-head" name="head" disabled><option value="0">1</option></select></span>
      <button type="submit">Show its attention</button>
    </form>
    <p class="bertlab-live-status" role="status" aria-live="polite"></p>
    <div class="bertlab-live-output bertlab-live-heatmaps" tabindex="0" role="region"
      aria-label="One head's attention under each mask: rows are query tokens, columns key tokens"></div>
    <form class="bertlab-live-form bertlab-live-edit" id="bertlab-attention-edit">
      <p class="bertlab-live-question"><strong>Predict, then run.</strong> Edit the last word of the sentence:
        which tokens' final vectors change? Answer for each mask, then run both sentences.</p>
      <div class="bertlab-live-predicts"></div>
      <label for="bertlab-attention-word">The new last word</label>
      <input id="bertlab-attention-word" name="word" type="text" autocomplete="off" spellcheck="false" size="12">
      <button type="submit">Run both sentences</button>
      <p class="bertlab-live-pair" id="bertlab-attention-pair"></p>
    </form>
    <div class="bertlab-live-verdicts"></div>
    <div class="bertlab-live-output bertlab-live-edits" tabindex="0" role="region"
      aria-label="How far each token's vector moved"></div>`);
  const form = box.querySelector('#bertlab-attention-form');
  const editForm = box.querySelector('#bertlab-attention-edit');
  const [input, example, layer, head] = ['text', 'example', 'layer', 'head']
    .map((id) => form.querySelector(`#bertlab-attention-${id}`));
  const word = editForm.querySelector('#bertlab-attention-word');
  const pairLine = editForm.querySelector('#bertlab-attention-pair');
  const status = progressView(box.querySelector('.bertlab-live-status'));
  const maps = box.querySelector('.bertlab-live-heatmaps');
  const movedOut = box.querySelector('.bertlab-live-edits');
  const questions = Object.fromEntries(MASKS.map((mask) => [mask, choiceQuestion({
    id: `bertlab-attention-predict-${mask}`, legend: `Under ${NAMES[mask]}`, choices: OUTCOMES,
    lead: `Under ${NAMES[mask]}, you predicted`,
  })]));
  for (const q of Object.values(questions)) {
    editForm.querySelector('.bertlab-live-predicts').append(q.element);
    box.querySelector('.bertlab-live-verdicts').append(q.verdict);
  }
  for (const text of examples) example.append(new Option(text, text));
  const lastWord = (text) => /[\p{L}\p{N}'’-]+(?=[^\p{L}\p{N}]*$)/u.exec(text)?.[0] ?? '';
  const second = () => { try { return withLastWord(input.value, word.value); } catch { return ''; } };
  const showPair = () => { pairLine.textContent = `The two sentences: “${input.value}” and “${second()}”`; };
  const pick = () => {
    input.value = example.value;
    const other = examples.find((e) => e !== example.value);  // the page's pair: each the other's edit
    word.value = other ? lastWord(other) : '';
    showPair();
  };
  example.addEventListener('change', pick);
  pick();
  for (const field of [input, word]) field.addEventListener('input', showPair);
  if (record.layers && record.heads) {
    fillSelect(layer, record.layers);
    fillSelect(head, record.heads);
  }
  status.set(`The model (${megabytes(size)}, with the runtime) downloads from this site when you first press `
    + 'a button.');
  box.dataset.state = 'idle';

  const onProgress = (got, total) => status.set(
    `Downloading the model: ${megabytes(got)} of ${megabytes(total)}`, total ? got / total : 0);
  let shown = null;  // the sentence whose maps are on the page
  let busy = false;

  function draw() {
    const [l, h] = [Number(layer.value), Number(head.value)];
    const legend = document.createElement('p');
    legend.className = 'bertlab-live-legend';
    legend.textContent = 'Each row is one query token\'s attention over the key tokens and sums to 1: the stronger '
      + 'the colour, the larger the weight. Hatched cells are blocked by the causal mask.';
    maps.replaceChildren(...MASKS.map((mask) => heatTable(shown.tokens, headWeights(shown[mask], l, h), mask, l, h)), legend);
  }

  async function act(work) {
    if (busy) return;
    busy = true;
    box.dataset.state = 'running';
    try {
      const started = performance.now();
      const done = await work();
      status.set(`${done} Computed in your browser in ${Math.round(performance.now() - started)} ms, from weights `
        + `stored in ${record.dtype}, so a number can differ slightly from the page's.`);
      box.dataset.state = 'done';
    } catch (err) {
      status.set(`The model could not run: ${err.message}`);
      box.dataset.state = 'error';
    } finally {
      busy = false;
    }
  }

  form.addEventListener('submit', (event) => {
    event.preventDefault();
    act(async () => {
      shown = await attentionMaps(input.value, onProgress);
      if (layer.disabled) {
        fillSelect(layer, shown.bidirectional.L);
        fillSelect(head, shown.bidirectional.H);
      }
      maps.dataset.ids = shown.ids.join(' ');
      draw();
      return `${shown.ids.length} tokens, ${shown.bidirectional.L} layers of ${shown.bidirectional.H} heads:`
        + ' pick another layer or head to see it.';
    });
  });
  for (const select of [layer, head]) select.addEventListener('change', () => { if (shown) draw(); });

  editForm.addEventListener('submit', (event) => {
    event.preventDefault();
    for (const q of Object.values(questions)) q.clear();
    act(async () => {
      const result = await edits(input.value, withLastWord(input.value, word.value), onProgress);
      movedOut.replaceChildren(movedTable(result));
      for (const mask of MASKS) {
        const actual = result.outcome[mask] === 'other' ? null : result.outcome[mask];
        questions[mask].settle(actual, explain(result, mask));
      }
      return `Both sentences under both masks; they differ from position ${result.changedFrom} on.`;
    });
  });
}

for (const box of document.querySelectorAll('.bertlab-live[data-live="attention"]')) {
  mount(box).catch((err) => {
    box.querySelector('.bertlab-live-note')?.append(` (The live model is unavailable: ${err.message})`);
    box.dataset.state = 'error';
  });
}

// Predict, then run: a box asks the reader to commit to an answer before it runs the model, then
// says whether the prediction held. Used by attention.mjs (Chapter 1: which tokens' vectors change
// when the last word is edited?) and fillmask.mjs (Chapter 4: the top fill). The answer stays in
// the page: no score is stored and nothing leaves the browser. Both kinds of question are plain
// form controls (radio buttons in a fieldset, or a text field), so the keyboard alone answers them,
// and the verdict is an aria-live line that a screen reader reads out when it changes.

/** The line that gives the verdict: data-held is "true", "false" or "none" (no prediction made). */
function verdictLine(id) {
  const line = document.createElement('p');
  line.className = 'bertlab-live-verdict';
  line.id = `${id}-verdict`;
  line.setAttribute('aria-live', 'polite');
  return {
    element: line,
    clear() {
      line.textContent = '';
      delete line.dataset.held;
      delete line.dataset.actual;
    },
    /** Shows ``text``; held is true, false or null (nothing predicted). */
    show(held, text, actual = '') {
      line.dataset.held = held === null ? 'none' : String(held);
      line.dataset.actual = actual;
      line.textContent = text;
    },
  };
}

/**
 * A multiple-choice prediction: a fieldset of radio buttons (one name: Tab enters the group, the
 * arrow keys choose) and its verdict line. choices: [{ value, label }]. settle(actual) compares
 * the chosen value with the value that came true and says so; it returns true, false or null.
 */
export function choiceQuestion({ id, legend, choices, lead = 'You predicted' }) {
  const fieldset = document.createElement('fieldset');
  fieldset.className = 'bertlab-live-predict';
  fieldset.id = id;
  const title = document.createElement('legend');
  title.textContent = legend;
  fieldset.append(title);
  for (const [i, choice] of choices.entries()) {
    const label = document.createElement('label');
    const radio = document.createElement('input');
    radio.type = 'radio';
    radio.name = id;
    radio.value = choice.value;
    radio.id = `${id}-${i}`;
    label.htmlFor = radio.id;
    label.append(radio, ` ${choice.label}`);
    fieldset.append(label);
  }
  const verdict = verdictLine(id);
  const labelOf = (value) => choices.find((c) => c.value === value)?.label ?? value;
  return {
    element: fieldset,
    verdict: verdict.element,
    get answer() { return fieldset.querySelector('input:checked')?.value ?? null; },
    clear: verdict.clear,
    settle(actual, explanation = '') {
      const answer = this.answer;
      const came = actual === null ? 'none of these' : `“${labelOf(actual)}”`;
      const tail = explanation ? ` ${explanation}` : '';
      if (answer === null) {
        verdict.show(null, `No prediction made: the answer was ${came}.${tail}`, actual ?? '');
        return null;
      }
      const held = answer === actual;
      verdict.show(held, `${lead} “${labelOf(answer)}”: ${held ? 'your prediction held' : `it did not hold; the answer was ${came}`}.${tail}`,
        actual ?? '');
      return held;
    },
  };
}

/**
 * A typed prediction: a labelled text field (its label says the guess is optional) and its
 * verdict line. The caller compares; settle(held, text) shows the verdict (held null: no guess).
 */
export function guessQuestion({ id, label }) {
  const wrap = document.createElement('span');
  wrap.className = 'bertlab-live-guess';
  const name = document.createElement('label');
  name.htmlFor = id;
  name.textContent = label;
  const input = document.createElement('input');
  input.type = 'text';
  input.id = id;
  input.name = id;
  input.autocomplete = 'off';
  input.spellcheck = false;
  input.size = 12;
  input.setAttribute('aria-describedby', `${id}-verdict`);
  wrap.append(name, ' ', input);
  const verdict = verdictLine(id);
  return {
    element: wrap,
    input,
    verdict: verdict.element,
    /** The guess, lower-cased and trimmed (the vocabulary is uncased), or null if none. */
    get answer() { return input.value.trim().toLowerCase() || null; },
    clear: verdict.clear,
    settle(held, text, actual = '') { verdict.show(held, text, actual); },
  };
}

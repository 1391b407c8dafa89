// BERT's tokenizer (uncased WordPiece), as transformers' BertTokenizerFast runs it: the
// BertNormalizer (clean text, pad CJK characters, lower case, strip accents), the
// BertPreTokenizer (split on whitespace and punctuation) and greedy longest-match WordPiece with
// "##" continuations (Devlin et al. 2019; Wu et al. 2016). Special tokens such as [MASK] are
// matched as written, never split. Used by fillmask.mjs and canvas.mjs; the site tests
// (tests/site/test_live_models.py) hold it to the Python tokenizer on every probe sentence.

const SPECIAL = /(\[MASK\]|\[CLS\]|\[SEP\]|\[PAD\]|\[UNK\])/;
const MAX_CHARS_PER_WORD = 100;

function isPunctuation(ch) {
  const c = ch.codePointAt(0);
  return (c >= 33 && c <= 47) || (c >= 58 && c <= 64) || (c >= 91 && c <= 96) || (c >= 123 && c <= 126)
    || /\p{P}/u.test(ch);
}

function isCjk(c) {
  return (c >= 0x4E00 && c <= 0x9FFF) || (c >= 0x3400 && c <= 0x4DBF) || (c >= 0x20000 && c <= 0x2A6DF)
    || (c >= 0x2A700 && c <= 0x2B73F) || (c >= 0x2B740 && c <= 0x2B81F) || (c >= 0x2B820 && c <= 0x2CEAF)
    || (c >= 0xF900 && c <= 0xFAFF) || (c >= 0x2F800 && c <= 0x2FA1F);
}

/** The normalizer: control characters dropped, whitespace to spaces, CJK padded, lower case, no accents. */
function normalize(text) {
  let out = '';
  for (const ch of text) {
    const c = ch.codePointAt(0);
    if (c === 0 || c === 0xFFFD || (/[\p{Cc}\p{Cf}]/u.test(ch) && !/[\t\n\r]/.test(ch))) continue;
    if (/\s/u.test(ch)) out += ' ';
    else if (isCjk(c)) out += ` ${ch} `;
    else out += ch;
  }
  return out.toLowerCase().normalize('NFD').replace(/\p{Mn}/gu, '');
}

/** The pre-tokenizer: words and single punctuation characters. */
function preTokenize(text) {
  const words = [];
  for (const chunk of text.split(/\s+/u)) {
    let word = '';
    for (const ch of chunk) {
      if (isPunctuation(ch)) {
        if (word) words.push(word);
        words.push(ch);
        word = '';
      } else {
        word += ch;
      }
    }
    if (word) words.push(word);
  }
  return words;
}

export class WordPiece {
  /** vocabText: vocab.txt, one token a line, the line number its id. */
  constructor(vocabText) {
    this.tokens = vocabText.split('\n').map((t) => t.replace(/\r$/, ''));
    if (this.tokens[this.tokens.length - 1] === '') this.tokens.pop();
    this.ids = new Map(this.tokens.map((t, i) => [t, i]));
    for (const name of ['[CLS]', '[SEP]', '[PAD]', '[MASK]', '[UNK]']) {
      if (!this.ids.has(name)) throw new Error(`vocab.txt has no ${name} token`);
    }
    this.cls = this.ids.get('[CLS]');
    this.sep = this.ids.get('[SEP]');
    this.pad = this.ids.get('[PAD]');
    this.mask = this.ids.get('[MASK]');
    this.unk = this.ids.get('[UNK]');
  }

  /** One word's pieces: the longest vocabulary prefix, then "##" pieces; [UNK] if none fits. */
  wordPieces(word) {
    const chars = [...word];
    if (chars.length > MAX_CHARS_PER_WORD) return [this.unk];
    const pieces = [];
    for (let start = 0; start < chars.length;) {
      let end = chars.length;
      let found = null;
      while (start < end) {
        const piece = (start > 0 ? '##' : '') + chars.slice(start, end).join('');
        if (this.ids.has(piece)) { found = this.ids.get(piece); break; }
        end -= 1;
      }
      if (found === null) return [this.unk];
      pieces.push(found);
      start = end;
    }
    return pieces;
  }

  /** Token ids of a text, without [CLS] and [SEP] (add_special_tokens=False). */
  encodeWithoutSpecials(text) {
    const ids = [];
    for (const part of text.split(SPECIAL)) {
      if (this.ids.has(part) && SPECIAL.test(part)) { ids.push(this.ids.get(part)); continue; }
      for (const word of preTokenize(normalize(part))) ids.push(...this.wordPieces(word));
    }
    return ids;
  }

  /** [CLS] text [SEP], as tokenizer(text)["input_ids"]. */
  encode(text) {
    return [this.cls, ...this.encodeWithoutSpecials(text), this.sep];
  }

  token(id) {
    return this.tokens[id];
  }
}

// Reference ids for tokenizer tests, from Hugging Face tokenizers (Rust core,
// Node.js binding). Not used by the test suite; run by hand to derive new
// expectations:
//   npm install tokenizers        (in any scratch folder; 0.23.2 was used)
//   NODE_PATH=<scratch>/node_modules node oracle.js TOKENIZER_JSON 'text' ...
// Prints one line per text: the JSON-quoted text, its tokens and its ids.
const { Tokenizer } = require('tokenizers');
(async () => {
  const [file, ...texts] = process.argv.slice(2);
  const tok = Tokenizer.fromFile(file);
  for (const text of texts) {
    const enc = await tok.encode(text);
    console.log(JSON.stringify(text), JSON.stringify(enc.getTokens()), JSON.stringify(enc.getIds()));
  }
})();

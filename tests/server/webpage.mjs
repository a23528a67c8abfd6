// The web page at "/" in headless Chromium (puppeteer-core): load it, type a
// text, press Speak, and check that streamed audio arrived and was played;
// then clone a voice through the upload form; then speak French with the
// Multilingual model (the language select appears only for it).
// With MODE vibevoice (a server of a VibeVoice model with the saved voices alice and
// bob): one voice picker per speaker of the typed script, sent as a list.
// usage: node webpage.mjs BASE_URL CHROMIUM REF_WAV [vibevoice]
import puppeteer from "puppeteer-core";

const [base, chrome, ref, mode] = process.argv.slice(2);
let fails = 0;
const ok = (m) => console.log("ok   " + m);
const bad = (m) => { console.log("FAIL " + m); fails++; };
const browser = await puppeteer.launch({
  executablePath: chrome, headless: true,
  args: ["--no-sandbox", "--disable-gpu", "--autoplay-policy=no-user-gesture-required", "--mute-audio"],
});
async function speakAndWait(page, what) {
  await page.click("#speak");
  await page.waitForFunction(() => window.__vocis.done || window.__vocis.error, { timeout: 60000 });
  const st = await page.evaluate(() => window.__vocis);
  st.error ? bad(what + ": " + st.error) : ok(`${what}: received ${st.bytes} bytes in ${st.chunks} chunk(s)`);
}

async function vibevoiceCases(page) {
  const pickers = () => page.$$eval("#speakers select", (l) => l.length);
  await page.$eval("#text", (t) => { t.value = ""; });
  await page.type("#text", "Hello from one speaker.");
  (await pickers()) === 0 ? ok("one voice picker for a one-speaker text") : bad("extra pickers for one speaker");
  await page.$eval("#text", (t) => { t.value = ""; });
  await page.type("#text", "Speaker 1: Hello, welcome back to the show!\nSpeaker 2: Thanks, it is great to be here.");
  (await pickers()) === 1 && (await page.$eval("#voice_t", (e) => e.textContent)) === "Speaker 1 voice"
    ? ok("a second picker for Speaker 2") : bad(`pickers for two speakers: ${1 + (await pickers())}`);
  await page.select("#voice", "alice");
  await page.select("#speakers select", "bob");
  await page.type("#seed", "77");
  await speakAndWait(page, "two speakers");
  await page.$eval("#text", (t) => { t.value = "Speaker 1: Hi."; t.dispatchEvent(new Event("input")); });
  (await pickers()) === 0 ? ok("the second picker goes with Speaker 2") : bad("a picker left for a removed speaker");
}

try {
  const page = await browser.newPage();
  page.on("pageerror", (e) => bad("page error: " + e.message));
  await page.goto(base + "/", { waitUntil: "networkidle0", timeout: 30000 });
  await page.waitForFunction(() => document.querySelector("#model").options.length > 0, { timeout: 10000 });
  ok("page loaded, models: " + (await page.$eval("#model", (s) => [...s.options].map((o) => o.value).join(","))));
  if (mode === "vibevoice") {
    await vibevoiceCases(page);
    throw null; /* done: the Chatterbox cases need another server */
  }
  await page.$eval("#text", (t) => { t.value = ""; });
  await page.type("#text", "Hello from the browser. This page plays audio while it streams.");
  await page.type("#seed", "3");
  await page.click("#speak");
  await page.waitForFunction(() => window.__vocis.done || window.__vocis.error, { timeout: 60000 });
  const st = await page.evaluate(() => window.__vocis);
  st.error ? bad("speak: " + st.error) : ok(`received ${st.bytes} bytes in ${st.chunks} chunk(s)`);
  /* Chatterbox streams while T3 generates: the first piece plays before the last arrives */
  st.chunks > 1 && Number.isInteger(st.first_ms) ? ok(`first audio after ${st.first_ms} ms, ${st.chunks} chunks`)
                                                 : bad(`streamed in ${st.chunks} chunk(s), first_ms ${st.first_ms}`);
  await page.waitForFunction(() => window.__vocis.played >= window.__vocis.chunks && window.__vocis.chunks > 0,
                             { timeout: 30000 }).then(() => ok("every chunk was played"), () => bad("audio not played"));
  (await page.$eval("#download", (a) => !a.hidden && a.href.startsWith("blob:"))) ? ok("download link ready") : bad("no download link");
  // upload-to-clone
  await page.type("#vname", "browser_voice");
  const input = await page.$("#vfile");
  await input.uploadFile(ref);
  await page.click("#upload");
  await page.waitForFunction(() => /saved|:/.test(document.querySelector("#vstatus").textContent), { timeout: 60000 });
  const vs = await page.$eval("#vstatus", (e) => e.textContent);
  vs.startsWith("saved browser_voice") ? ok("voice cloned from the page: " + vs) : bad("upload: " + vs);
  (await page.$eval("#voice", (s) => s.value)) === "browser_voice" ? ok("new voice selected") : bad("new voice not selected");
  // Multilingual: a language select for the model that has languages, sent as "language"
  (await page.$eval("#language_l", (l) => l.hidden)) ? ok("no language select for the English model")
                                                     : bad("a language select for the English model");
  await page.select("#model", "mtl");
  const langs = await page.$eval("#language_l", (l) => l.hidden ? [] : [...document.querySelector("#language").options].map((o) => o.value));
  langs.length === 23 && langs.includes("fr") ? ok("language select for mtl: " + langs.join(",")) : bad("languages: " + langs);
  await page.select("#language", "fr");
  await page.select("#voice", "default");
  await page.$eval("#text", (t) => { t.value = "Bonjour depuis le navigateur."; });
  await page.click("#speak");
  await page.waitForFunction(() => window.__vocis.done || window.__vocis.error, { timeout: 60000 });
  const st2 = await page.evaluate(() => window.__vocis);
  st2.error ? bad("speak in French: " + st2.error) : ok(`French: received ${st2.bytes} bytes`);
  await page.select("#model", "ckpt");
  (await page.$eval("#language_l", (l) => l.hidden)) ? ok("language select hidden again for ckpt") : bad("language select still shown");
} catch (e) {
  if (e !== null) bad(String(e));
} finally {
  await browser.close();
}
process.exit(fails ? 1 : 0);

// The official openai npm SDK against `vocis serve`: speech.create (whole file
// and streamed body), model / voice aliases, an SDK-raised error for a bad request.
// usage: node openai_client.mjs BASE_URL API_KEY OUT_DIR
import OpenAI from "openai";
import { writeFileSync } from "node:fs";

const [base, key, out] = process.argv.slice(2);
const client = new OpenAI({ baseURL: base + "/v1", apiKey: key, timeout: 60000, maxRetries: 0 });
let fails = 0;
const ok = (m) => console.log("ok   " + m);
const bad = (m) => { console.log("FAIL " + m); fails++; };

// whole file, OpenAI names; vocis extras (seed) go in the same JSON body
const r = await client.audio.speech.create({ model: "tts-1", voice: "alloy", input: "Hello world, this is vocis.",
                                             response_format: "wav", seed: 7 });
const wav = Buffer.from(await r.arrayBuffer());
writeFileSync(out + "/npm.wav", wav);
wav.subarray(0, 4).toString() === "RIFF" ? ok(`speech.create wav: ${wav.length} bytes`) : bad("not a WAV");

// default format (mp3) with gpt-4o-mini-tts / nova
const m = await client.audio.speech.create({ model: "gpt-4o-mini-tts", voice: "nova", input: "An MP3, please." });
const mp3 = Buffer.from(await m.arrayBuffer());
(mp3[0] === 0xff || mp3.subarray(0, 3).toString() === "ID3") ? ok(`speech.create mp3: ${mp3.length} bytes`) : bad("not MP3");

// streaming: chunked audio read as it arrives
const text = "Streaming from the openai client, one sentence after another. ".repeat(8);
const s = await client.audio.speech.create({ model: "tts-1", voice: "echo", input: text, response_format: "pcm",
                                             stream_format: "audio", seed: 3 });
let chunks = 0, bytes = 0;
const parts = [];
for await (const c of s.body) { chunks++; bytes += c.length; parts.push(Buffer.from(c)); }
writeFileSync(out + "/npm_stream.pcm", Buffer.concat(parts));
bytes > 1000 ? ok(`streamed body: ${bytes} bytes in ${chunks} reads`) : bad(`streamed body too short: ${bytes}`);

// SSE events
const e = await client.audio.speech.create({ model: "tts-1", voice: "alloy", input: "Events, please.",
                                             response_format: "pcm", stream_format: "sse", seed: 3 });
const sse = await e.text();
const deltas = sse.split("\n").filter((l) => l.startsWith('data: {"type":"speech.audio.delta"')).length;
const done = sse.includes('"type":"speech.audio.done"');
deltas > 0 && done ? ok(`sse: ${deltas} speech.audio.delta + speech.audio.done`) : bad("sse events missing");

// errors come back as the SDK's typed errors with OpenAI's fields
try {
  await client.audio.speech.create({ model: "tts-1", voice: "alloy", input: "x", response_format: "aac" });
  bad("aac accepted");
} catch (err) {
  err instanceof OpenAI.BadRequestError && err.status === 400 && err.code === "unsupported_response_format"
    ? ok(`aac -> BadRequestError ${err.status} ${err.code}`) : bad(`aac -> ${err}`);
}
try {
  await new OpenAI({ baseURL: base + "/v1", apiKey: "wrong", maxRetries: 0 }).models.list();
  bad("wrong key accepted");
} catch (err) {
  err instanceof OpenAI.AuthenticationError ? ok(`wrong key -> AuthenticationError ${err.status}`) : bad(`wrong key -> ${err}`);
}
const models = [];
for await (const x of client.models.list()) models.push(x.id);
models.includes("tts-1") ? ok(`models.list: ${models.join(", ")}`) : bad("models.list lacks tts-1");
process.exit(fails ? 1 : 0);

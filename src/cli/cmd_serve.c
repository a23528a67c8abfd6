/* `vocis serve`: the OpenAI-compatible speech server (src/server/). */
#include <stdio.h>
#include <string.h>

#include "cli/cli.h"
#include "server/server.h"

static const char usage[] =
    "usage: vocis serve --model DIR [--model NAME=DIR ...] [--voices DIR] [--host 127.0.0.1] [--port 8080]\n"
    "                   [--api-key KEY] [--cors ORIGIN] [--max-queue N] [--batch N] [--max-chars N] [--threads N] [--precision P]\n\n"
    "OpenAI-compatible HTTP speech server: POST /v1/audio/speech (mp3, opus, flac, wav, pcm; stream_format\n"
    "audio or sse), GET /v1/models, GET/POST/DELETE /v1/voices, GET /health, /ready, /metrics, and a web\n"
    "page at /. The first --model is the default and answers OpenAI's model names (tts-1, tts-1-hd,\n"
    "gpt-4o-mini-tts); OpenAI's voice names (alloy, nova, ...) pick the built-in voice unless a saved voice\n"
    "has that name; for VibeVoice, 'voice' may be a list of saved voices, one per 'Speaker N' of the script.\n"
    "Slow clients are closed at --header-timeout / --body-timeout, and the last eighth of --max-connections is\n"
    "kept for new arrivals. Requests to one model are taken in arrival order (a queue of --max-queue); up to --batch\n"
    "requests of a Chatterbox (English, Multilingual, Turbo, Nano) or VibeVoice model run at once, their steps\n"
    "batched into one forward (each weight read once per step; at most 8 step together).\n"
    "Binds 127.0.0.1 unless told otherwise; SIGINT / SIGTERM shut it down cleanly (exit 0).";

int cmd_serve(int argc, char **argv) {
    vx_server_config c;
    vx_server_config_default(&c);
    cli_list models = {c.models, 0, VX_SRV_MAX_MODELS};
    int batch = c.batch;
    int port = c.port, max_queue = c.max_queue, max_chars = c.max_chars, idle = c.idle_timeout;
    int max_body_kb = (int)(c.max_body >> 10), max_upload_kb = (int)(c.max_upload >> 10), conns = c.max_connections;
    float timeout = (float)c.request_timeout, header_timeout = (float)c.header_timeout, body_timeout = (float)c.body_timeout;
    int header_kb = c.max_header_kb, per_ip = c.max_per_ip;
    const char *precision = NULL;
    const cli_opt opts[] = {
        {"--model", CLI_LIST, &models, "model folder, or NAME=DIR; repeat to serve several (the first is the default)",
         0, -1},
        {"--voices", CLI_STR, &c.voices_dir, "folder of saved voices (created; POST /v1/voices writes NAME.voice + NAME.ref)", 0, -1},
        {"--host", CLI_STR, &c.host, "address or host name to bind (127.0.0.1; 0.0.0.0 for every interface)", 0, -1},
        {"--port", CLI_INT, &port, "TCP port (8080; 0 = any free port)", 0, 65535},
        {"--port-file", CLI_STR, &c.port_file, "write the bound port to this file once listening", 0, -1},
        {"--api-key", CLI_STR, &c.api_key, "require Authorization: Bearer KEY on /v1/* and /metrics", 0, -1},
        {"--cors", CLI_STR, &c.cors, "let browser pages of these origins call the API (\"*\" or ORIGIN[,ORIGIN...]; default: none)", 0, -1},
        {"--max-queue", CLI_INT, &max_queue, "requests waiting or running per model before 429 (16)", 1, 100000},
        {"--batch", CLI_INT, &batch, "requests per model run at once, their steps batched (Chatterbox, VibeVoice; 4; at most 8)", 1,
         VX_SRV_MAX_WORKERS},
        {"--max-chars", CLI_INT, &max_chars, "longest input in characters (4096)", 1, 1 << 24},
        {"--max-body-kb", CLI_INT, &max_body_kb, "largest JSON request body in KiB (1024)", 1, 1 << 20},
        {"--max-upload-kb", CLI_INT, &max_upload_kb, "largest voice upload in KiB (16384)", 1, 1 << 21},
        {"--request-timeout", CLI_FLOAT, &timeout, "seconds a request may take, queue included (300)", 0.1, 1e6},
        {"--idle-timeout", CLI_INT, &idle, "seconds a connection may send or take nothing (30)", 1, 3600},
        {"--header-timeout", CLI_FLOAT, &header_timeout,
         "seconds from a connection's start (a kept-alive one's: its last request's end + --idle-timeout) to the "
         "end of its request's headers, else it is closed (10)", 0.1, 3600},
        {"--body-timeout", CLI_FLOAT, &body_timeout, "seconds from the end of the headers to the end of the body (60)",
         0.1, 86400},
        {"--max-header-kb", CLI_INT, &header_kb, "request line + headers at most, in KiB; larger is answered 431 (32)",
         4, 1024},
        {"--max-connections", CLI_INT, &conns,
         "open connections at most (64); the last eighth is kept for new arrivals: once the rest is taken, each new "
         "connection closes the oldest one still sending its request", 1, 1000},
        {"--max-connections-per-ip", CLI_INT, &per_ip, "open connections from one address at most (0 = no limit)", 0,
         10000},
        {"--threads", CLI_INT, &c.threads, "model threads (default: physical cores)", 1, 1024},
        {"--precision", CLI_STR, &precision, CLI_PRECISION_HELP, 0, -1},
        {"--voice-cache-mb", CLI_INT, &c.voice_cache_mb, CLI_VOICE_CACHE_HELP, -1, 1 << 20},
        {"--config", CLI_STR, &c.config_path, "hyper-parameter override file for the models", 0, -1},
        {"--quiet|-q", CLI_FLAG, &c.quiet, "no per-request log lines", 0, -1},
    };
    int r = cli_parse(argc, argv, opts, (int)(sizeof opts / sizeof opts[0]), usage);
    if (r) return r == 1 ? 0 : 2;
    c.n_models = models.n;
    if (cli_precision("serve", precision, &c.precision)) return 2;
    if (c.n_models == 0) return cli_error("serve", "--model DIR is required"), 2;
    c.batch = batch;
    c.port = port, c.max_queue = max_queue, c.max_chars = max_chars, c.idle_timeout = idle;
    c.max_body = (size_t)max_body_kb << 10, c.max_upload = (size_t)max_upload_kb << 10;
    c.max_connections = conns, c.request_timeout = timeout;
    c.header_timeout = header_timeout, c.body_timeout = body_timeout, c.max_header_kb = header_kb, c.max_per_ip = per_ip;
    return vx_server_run(&c);
}

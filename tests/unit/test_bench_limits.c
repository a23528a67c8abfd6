/* The work counts and the limit note of `vocis bench` figures (src/cli/bench_limits.c): bytes of
 * matrices by dtype (q8 with its scales), a transformer's decode and prefill work counted from its
 * matrices, and which limit the note names (the larger of bytes / bandwidth and FLOPs / peak). */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "cli/bench_limits.h"
#include "kernels/precision.h"
#include "testlib.h"

static int near(double a, double b) { return fabs(a - b) <= 1e-9 * fabs(b); }

int main(int argc, char **argv) {
    if (argc > 1) tl_data_dir = argv[1];
    static const char dummy[1]; /* matrices are counted, never read */
    const vx_mat f32 = {VX_F32, 7, 13, dummy, 0}, bf16 = {VX_BF16, 7, 13, dummy, 1}, q8 = {VX_Q8, 5, 70, dummy, 1};
    const vx_mat none = {VX_F32, 7, 13, NULL, 0};
    CHECK(bench_mat_bytes(&f32) == 7 * 13 * 4);
    CHECK(bench_mat_bytes(&bf16) == 7 * 13 * 2);
    /* 70 columns: 3 blocks of 32 codes in one group of 16 scales (64 bytes) */
    CHECK(bench_mat_row_bytes(&q8) == 64 + 3 * 32 && bench_mat_bytes(&q8) == 5.0 * vx_q8_row_bytes(70));
    CHECK(bench_mat_macs(&f32) == 91 && bench_mat_bytes(&none) == 0 && bench_mat_macs(&none) == 0);

    /* two layers of odd sizes: D 5, 3 heads of 2 (H·hd 6), 1 KV head, F 11 */
    vx_tf_layer ly[2];
    for (int i = 0; i < 2; i++) {
        const vx_dtype dt = i ? VX_BF16 : VX_F32;
        ly[i] = (vx_tf_layer){0};
        ly[i].q = (vx_mat){dt, 6, 5, dummy, 0};
        ly[i].k = ly[i].v = (vx_mat){dt, 2, 5, dummy, 0};
        ly[i].o = (vx_mat){dt, 5, 6, dummy, 0};
        ly[i].gate = ly[i].up = (vx_mat){dt, 11, 5, dummy, 0};
        ly[i].down = (vx_mat){dt, 5, 11, dummy, 0};
    }
    vx_tf tf = {0};
    tf.n_layers = 2, tf.dim = 5, tf.n_heads = 3, tf.n_kv_heads = 1, tf.head_dim = 2, tf.ffn_dim = 11, tf.chunk = 4;
    tf.layers = ly;
    const double macs_layer = 30 + 10 + 10 + 30 + 55 + 55 + 55; /* 245 */
    CHECK(near(bench_tf_macs(&tf), 2 * macs_layer));
    CHECK(near(bench_tf_weight_bytes(&tf), macs_layer * 4 + macs_layer * 2));
    const double kvp = 2 * 2 * 1 * 2 * 4; /* K + V, 2 layers, 1 KV head of 2, f32 */
    bench_work w = bench_tf_decode(&tf, 2, 9, kvp);
    CHECK(near(w.bytes, macs_layer * 6 + 2 * 9 * kvp));
    CHECK(near(w.flops, 2 * (2 * 2 * macs_layer + 4.0 * 2 * 3 * 2 * 9)));
    CHECK(w.bf16 == 0);
    /* prefill of 6 after 3 cached, chunks of 4: weights read twice; query i attends to 3 + i */
    w = bench_tf_prefill(&tf, 1, 3, 6, kvp);
    CHECK(near(w.bytes, 2 * macs_layer * 6 + 9 * kvp));
    CHECK(near(w.flops, 6 * 2 * 2 * macs_layer + 4.0 * 2 * 3 * 2 * (6 * 3 + 21)));
    const bench_work half = bench_work_scale(w, 0.5);
    CHECK(near(half.bytes, w.bytes / 2) && near(half.flops, w.flops / 2));

    /* the note: memory-bound, f32-bound, bf16-bound, bf16 work without a bf16 peak, nothing measured */
    const bench_limits lim = {2, 50, 20, 100, 400};
    char note[256];
    bench_limit_note(note, sizeof note, &lim, (bench_work){1.02e9, 2e9, 0}, "step", 0.025);
    CHECK_MSG(!strcmp(note, "bytes 1.02e9/step, flops 2.00e9/step, 82 % of 50.0 GB/s memory read"), "got \'%s\'", note);
    bench_limit_note(note, sizeof note, &lim, (bench_work){1e6, 5e10, 0}, "position", 1.0);
    CHECK_MSG(!strcmp(note, "bytes 1.00e6/position, flops 5.00e10/position, 50 % of 100 GFLOP/s f32 peak"),
              "got '%s'", note);
    bench_limit_note(note, sizeof note, &lim, (bench_work){1e6, 2e11, 1}, "step", 1.0);
    CHECK_MSG(!strcmp(note, "bytes 1.00e6/step, flops 2.00e11/step, 50 % of 400 GFLOP/s bf16 peak"),
              "got '%s'", note);
    bench_limit_note(note, sizeof note, &lim, (bench_work){1e8, 0, 0}, "step", 1.0);
    CHECK_MSG(!strcmp(note, "bytes 1.00e8/step, flops 0/step, 0.2 % of 50.0 GB/s memory read"), "got '%s'", note);
    const bench_limits no_bf16 = {2, 50, 20, 100, 0};
    bench_limit_note(note, sizeof note, &no_bf16, (bench_work){1e6, 5e10, 1}, "step", 1.0);
    CHECK_MSG(!strcmp(note, "bytes 1.00e6/step, flops 5.00e10/step, 50 % of 100 GFLOP/s f32 peak"), "got \'%s\'", note);
    const bench_limits unmeasured = {2, 0, 0, 0, 0};
    bench_limit_note(note, sizeof note, &unmeasured, (bench_work){9.996e9, 0, 0}, "frame", 1.0);
    CHECK_MSG(!strcmp(note, "bytes 1.00e10/frame, flops 0/frame"), "got \'%s\'", note);
    /* parts each at their own bound: 1e9 B at 50 GB/s (20 ms) + 2e11 bf16 FLOP at 400 GFLOP/s (500 ms) */
    const bench_work parts[2] = {{1e9, 1e6, 0}, {1e6, 2e11, 1}};
    bench_limit_note_parts(note, sizeof note, &lim, parts, 2, "frame", 1.04);
    CHECK_MSG(!strcmp(note, "bytes 1.00e9/frame, flops 2.00e11/frame, 50 % of its parts' bounds"), "got '%s'", note);
    bench_limit_note_parts(note, sizeof note, &unmeasured, parts, 2, "frame", 1.04);
    CHECK_MSG(!strcmp(note, "bytes 1.00e9/frame, flops 2.00e11/frame"), "got '%s'", note);
    /* a short buffer is cut, never overrun */
    char tiny[12];
    bench_limit_note(tiny, sizeof tiny, &lim, (bench_work){1.02e9, 2e9, 0}, "step", 0.025);
    CHECK(strlen(tiny) == sizeof tiny - 1);
    return tl_finish("test_bench_limits");
}

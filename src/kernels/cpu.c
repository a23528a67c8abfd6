/* CPU feature detection: cpuid for the instruction sets, xgetbv for whether
 * the OS saves the wide registers (a CPU may have AVX-512 that the OS hides). */
#include <cpuid.h>
#include <pthread.h>
#include <stdint.h>

#include "kernels/isa.h"

static struct {
    int avx2, avx512, avx512bf16, isa;
} cpu;
static pthread_once_t cpu_once = PTHREAD_ONCE_INIT;

static uint64_t xgetbv0(void) {
    uint32_t lo, hi;
    __asm__ volatile("xgetbv" : "=a"(lo), "=d"(hi) : "c"(0));
    return ((uint64_t)hi << 32) | lo;
}

static void cpu_detect(void) {
    unsigned a, b, c, d;
    if (!__get_cpuid(1, &a, &b, &c, &d)) return;
    int fma = (c >> 12) & 1, osxsave = (c >> 27) & 1, avx = (c >> 28) & 1, f16c = (c >> 29) & 1;
    if (!osxsave || !avx) return;
    uint64_t xcr0 = xgetbv0();
    int os_ymm = (xcr0 & 0x6) == 0x6;     /* SSE + AVX state */
    int os_zmm = (xcr0 & 0xe6) == 0xe6;   /* + opmask, ZMM_Hi256, Hi16_ZMM */
    if (__get_cpuid_max(0, 0) < 7) return;
    __cpuid_count(7, 0, a, b, c, d);
    int avx2 = (b >> 5) & 1, avx512f = (b >> 16) & 1, avx512dq = (b >> 17) & 1;
    int avx512bw = (b >> 30) & 1, avx512vl = (b >> 31) & 1;
    cpu.avx2 = os_ymm && avx2 && fma && f16c;
    cpu.avx512 = cpu.avx2 && os_zmm && avx512f && avx512dq && avx512bw && avx512vl;
    __cpuid_count(7, 1, a, b, c, d);
    cpu.avx512bf16 = cpu.avx512 && ((a >> 5) & 1);
    cpu.isa = cpu.avx512 ? VX_ISA_AVX512 : cpu.avx2 ? VX_ISA_AVX2 : VX_ISA_SCALAR;
}

int vx_cpu_isa(void) {
    pthread_once(&cpu_once, cpu_detect);
    return cpu.isa;
}
/* avx2 here means AVX2 + FMA + F16C; avx512 means F + DQ + BW + VL, the sets the kernels use. */
int vx_cpu_has_avx2(void) {
    vx_cpu_isa();
    return cpu.avx2;
}
int vx_cpu_has_avx512(void) {
    vx_cpu_isa();
    return cpu.avx512;
}
int vx_cpu_has_avx512bf16(void) {
    vx_cpu_isa();
    return cpu.avx512bf16;
}

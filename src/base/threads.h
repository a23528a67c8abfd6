#ifndef VX_THREADS_H
#define VX_THREADS_H
/* Default worker count: physical cores (from sysfs), at least 1. */
int vx_default_threads(void);

/* Chooses, step by step, between `max` threads and one for a loop of alike
 * steps (a decode loop). When another process holds a core, several
 * threads can be slower than one: every parallel region ends in a barrier
 * that waits for whichever thread the OS has preempted (T3 decode next to
 * one busy process: 2 threads 16 steps/s, 1 thread 24). The tuner runs the
 * faster count by its recent average and tries the other every 16th step,
 * so it follows a neighbour that comes and goes. Only for loops whose
 * results do not depend on the thread count. */
typedef struct vx_thread_tuner {
    int max, cur, step, size; /* size: the caller's measure of a step's work (avgs reset when it changes) */
    double avg[2];            /* recent step seconds with 1 thread [0] and with max [1]; 0 = none yet */
} vx_thread_tuner;
void vx_tuner_init(vx_thread_tuner *t, int max);
/* Threads for the next step of `size` units of work. */
int vx_tuner_begin(vx_thread_tuner *t, int size);
/* That step took `seconds` with `used` threads. */
void vx_tuner_end(vx_thread_tuner *t, int used, double seconds);
/* Monotonic seconds. */
double vx_now_s(void);
#endif

/* Where a VibeVoice session's script turns lie in its audio. The model speaks all of a session's
 * turns in one stream of 133 ms frames and marks no turn ends (a run is one speech segment:
 * frames, speech_end, eos), so turns are attributed by a rule: the frames are shared out in
 * proportion to each turn's text length, then each boundary moves to the quietest frame within a
 * third of the shorter of its two turns (at most VX_TURN_SNAP_FRAMES), where a speaker change
 * usually pauses. */
#ifndef VX_TURN_CUES_H
#define VX_TURN_CUES_H

#include <stdint.h>

#define VX_TURN_SNAP_FRAMES 15 /* 2 s */

/* A turn's text length: its characters (UTF-8 code points) other than white space, at least 1. */
int64_t vx_turn_weight(const char *text);

/* ends[i] = the frame (exclusive, in [0, n_frames]) where turn i of n_turns ends; turn i spans
 * [ends[i - 1], ends[i]) (turn 0 from 0), ends[n_turns - 1] = n_frames, never decreasing.
 * energy[f] = frame f's mean square (n_frames of them). */
void vx_turn_bounds(const int64_t *weight, int n_turns, const float *energy, int64_t n_frames, int64_t *ends);

#endif

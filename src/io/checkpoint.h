/* The container of a resumable job's checkpoint (vocis speak --checkpoint /
 * --resume). Little-endian, version VX_CKPT_VERSION:
 *
 *   0   "VOCISCKP"                    magic
 *   8   u32 version, u32 n_sections
 *   16  u64 model fingerprint         (vx_api_model_fingerprint)
 *   24  u64 job[4]                    text, voices, seed, options (the parts of the job hash)
 *   56  u64 samples                   audio samples the output held when it was taken
 *   64  u64 file size                 of the whole checkpoint, footer included
 *   72  n_sections x {char tag[16], u64 size}
 *       the sections' bytes, in table order
 *   end u64 checksum (vx_hash of every byte before it), "CKPTEND\0"
 *
 * Written atomically: FILE.tmp, fsync, rename over FILE, fsync of the folder;
 * so FILE is always the previous complete checkpoint or the new one. */
#ifndef VX_CHECKPOINT_H
#define VX_CHECKPOINT_H

#include <stddef.h>
#include <stdint.h>

#include "base/err.h"

#define VX_CKPT_VERSION 1u
#define VX_CKPT_TAG 16
#define VX_CKPT_HEADER 72
#define VX_CKPT_FOOTER 16

enum { VX_JOB_TEXT, VX_JOB_VOICES, VX_JOB_SEED, VX_JOB_OPTIONS, VX_JOB_PARTS };

typedef struct vx_ckpt_id {
    uint64_t model;             /* fingerprint of the model files */
    uint64_t job[VX_JOB_PARTS]; /* what the audio depends on, by part */
} vx_ckpt_id;

typedef struct vx_ckpt_piece {
    char tag[VX_CKPT_TAG]; /* NUL-padded */
    const void *data;
    uint64_t size;
} vx_ckpt_piece;

/* Writes the pieces (each its own section) atomically to path. */
vocis_status vx_ckpt_write(const char *path, const vx_ckpt_id *id, uint64_t samples, const vx_ckpt_piece *pieces,
                           int n_pieces, vx_err *err);

typedef struct vx_ckpt {
    uint8_t *buf; /* the whole file (mapped when loaded from a path: owned) */
    size_t n;
    int owned;
    vx_ckpt_id id;
    uint64_t samples;
    uint32_t n_sections;
    const char *name; /* for messages */
} vx_ckpt;

/* Checks the structure: magic, version, section sizes against the file's size, checksum.
 * buf is borrowed (ck->buf points into it). name names the file in messages. */
vocis_status vx_ckpt_parse(const uint8_t *buf, size_t n, const char *name, vx_ckpt *ck, vx_err *err);
/* Maps path whole (read-only) and parses it. */
vocis_status vx_ckpt_load(const char *path, vx_ckpt *ck, vx_err *err);
void vx_ckpt_free(vx_ckpt *ck);
/* The checkpoint belongs to this model and this job, else an error naming what differs. */
vocis_status vx_ckpt_check_id(const vx_ckpt *ck, const vx_ckpt_id *want, vx_err *err);
/* Section tag, which must hold exactly size bytes (size UINT64_MAX: any; *got_size gets it). */
vocis_status vx_ckpt_section(const vx_ckpt *ck, const char *tag, uint64_t size, const void **data,
                             uint64_t *got_size, vx_err *err);

#endif

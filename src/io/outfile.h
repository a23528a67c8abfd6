/* Writing an output path the way a careful user expects: a regular file (or a
 * new one) is replaced atomically through a unique temporary in the same folder
 * (keeping the old file's permission bits; a new file gets 0666 & ~umask), a
 * symlink's target is written (the link stays a link), and a device, named
 * pipe or socket, or /dev/stdout (a link through /proc), is written through as
 * a shell redirection does (a FIFO's reader gets the bytes; /dev/null stays a
 * device). */
#ifndef VX_OUTFILE_H
#define VX_OUTFILE_H

#include <stddef.h>

#include "base/err.h"

typedef struct vx_outfile {
    int fd;
    const char *name; /* the path as given, for messages */
    char *path;       /* where the bytes end up (symlinks resolved) */
    char *tmp;        /* renamed over path by vx_outfile_commit; NULL when writing through */
} vx_outfile;

vocis_status vx_outfile_open(vx_outfile *f, const char *path, vx_err *err);
vocis_status vx_outfile_write(vx_outfile *f, const void *p, size_t n, vx_err *err);
/* Renames the temporary into place now and keeps writing there (the file is then
 * the path's, also after vx_outfile_abort); nothing to do when writing through
 * or already published. */
vocis_status vx_outfile_publish(vx_outfile *f, vx_err *err);
/* Closes and renames the temporary into place; on failure (or after a failed
 * write) nothing is left but the old file. Frees f's contents either way. */
vocis_status vx_outfile_commit(vx_outfile *f, vx_err *err);
/* Closes and removes the temporary (a write-through target keeps what it got). */
void vx_outfile_abort(vx_outfile *f);

#endif

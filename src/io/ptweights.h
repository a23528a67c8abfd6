/* A torch.save'd state dict (`torch.save(module.state_dict(), "x.pt")`, the
 * format of Chatterbox-Multilingual's s3gen.pt and ve.pt) as a vx_weights,
 * so that every loader written for safetensors reads it unchanged.
 *
 * The root object must be a dict (or OrderedDict) of string keys to tensors;
 * anything else is VOCIS_E_FORMAT naming the key. Tensors view the mapped
 * archive (strided ones are copied by the pickle reader); the archive stays
 * open until vx_weights_close. */
#ifndef VX_PTWEIGHTS_H
#define VX_PTWEIGHTS_H

#include "base/err.h"
#include "io/safetensors.h"

vocis_status vx_weights_open_pt(const char *path, vx_weights **out, vx_err *err);

#endif

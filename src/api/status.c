#include "vocis.h"

const char *vocis_status_name(vocis_status st) {
    switch (st) {
    case VOCIS_OK: return "ok";
    case VOCIS_E_IO: return "io";
    case VOCIS_E_FORMAT: return "format";
    case VOCIS_E_SHAPE: return "shape";
    case VOCIS_E_ARG: return "argument";
    case VOCIS_E_NOMEM: return "out of memory";
    case VOCIS_E_UNSUPPORTED: return "unsupported";
    case VOCIS_E_INTERNAL: return "internal";
    case VOCIS_E_CANCELLED: return "cancelled";
    case VOCIS_E_INVALID: return "invalid input";
    }
    return "unknown";
}

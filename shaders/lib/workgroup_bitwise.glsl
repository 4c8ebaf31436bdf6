// Instantiates the workgroup template for and, or, xor over WGT_T (integer types only).
#define WGT_OP and
#include "workgroup_template.glsl"
#undef WGT_OP
#define WGT_OP or
#include "workgroup_template.glsl"
#undef WGT_OP
#define WGT_OP xor
#include "workgroup_template.glsl"
#undef WGT_OP

// Instantiates the workgroup template for add, mul, min, max over WGT_T (see workgroup.glsl).
#define WGT_OP add
#include "workgroup_template.glsl"
#undef WGT_OP
#define WGT_OP mul
#include "workgroup_template.glsl"
#undef WGT_OP
#define WGT_OP min
#include "workgroup_template.glsl"
#undef WGT_OP
#define WGT_OP max
#include "workgroup_template.glsl"
#undef WGT_OP

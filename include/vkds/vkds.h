/* vkds/vkds.h: everything. vkds turns every Vulkan compute queue on a machine into a
 * resource that a policy picks at run time, dispatches SPIR-V kernels on it, and offers
 * parallel algorithms on top. Start with vkds_context_create() (vkds/context.h). */
#ifndef VKDS_VKDS_H
#define VKDS_VKDS_H

#include "vkds/result.h"
#include "vkds/context.h"
#include "vkds/backend.h"
#include "vkds/policy.h"
#include "vkds/buffer.h"
#include "vkds/staging.h"
#include "vkds/seq.h"
#include "vkds/kernel.h"
#include "vkds/algorithm.h"
#include "vkds/selftest.h"
#include "vkds/version.h"

#endif

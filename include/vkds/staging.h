/* vkds/staging.h: moving bytes between host memory and device buffers.
 *
 * Each device has a staging area: a ring of host-visible chunks (host-cached where the
 * device has such memory, so downloads read at full CPU speed). An upload copies the
 * first chunk's worth of host data into a free chunk, submits the GPU copy out of it on
 * the given resource's queue, and goes on with the next chunk while the GPU copies the
 * last one; large chunks are filled by several threads at once. Downloads run the same
 * pipeline the other way. Both calls return when the bytes have arrived.
 *
 * Buffers whose memory the host sees and caches (host, imported, readback, and mapped
 * buffers on devices whose memory is system memory) are copied by the host threads,
 * with no GPU work. Mapped buffers in uncached device memory (ReBAR) are written by
 * the host when small, but read, and written when large, through the GPU copy: the
 * host reads such memory at under 0.5 GB/s. Host memory imported into the device
 * (vkds_buffer_import_host) is copied by the GPU in place, without staging.
 *
 * Ordering: the calls do not wait for other work. The device must be done writing a
 * buffer before it is downloaded, and done reading one before it is overwritten. */
#ifndef VKDS_STAGING_H
#define VKDS_STAGING_H

#include <stdint.h>

#include "vkds/buffer.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Copies `bytes` from `src` into `dst` (a view's offset, then `bytes`; bytes may exceed
 * dst.bytes only when dst.bytes is 0, meaning "to the end"), using the queue of `res`,
 * which must be on the buffer's device (a VKDS_MEMORY_HOST buffer is plain host memory:
 * any resource of the context copies it, on the host). bytes 0 copies
 * nothing (the view is still checked). Returns
 * VKDS_ERROR_INVALID_ARGUMENT (NULL res, NULL src with bytes > 0, NULL buffer, range
 * past the buffer, a host range that overlaps the copied range of the buffer's own
 * memory: its mapping, or the host memory it imports), VKDS_ERROR_WRONG_DEVICE (a
 * buffer of another device than res's), VKDS_ERROR_WRONG_CONTEXT (a buffer of another
 * context than res's), VKDS_ERROR_OUT_OF_DEVICE_MEMORY when the staging area cannot be
 * made, VKDS_ERROR_VULKAN / VKDS_ERROR_DEVICE_LOST. */
VKDS_API vkds_result vkds_upload(vkds_resource *res, vkds_view dst, const void *src, uint64_t bytes);

/* Copies `bytes` from `src` to host memory at `dst`; same rules as vkds_upload. */
VKDS_API vkds_result vkds_download(vkds_resource *res, void *dst, vkds_view src, uint64_t bytes);

#ifdef __cplusplus
}
#endif
#endif

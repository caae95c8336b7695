/* bench/plain_scan.c: see plain_scan.h. */
#include "plain_scan.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "scan1.comp.h"
#include "scan3.comp.h"

enum { TILE_WORDS = 4096, MAX_GROUPS = 1024 };
/* scan1's state: the tile counter and a status word per tile, for up to 2^28 words in
 * tiles of 256 (64 threads, one uvec4 each) or more */
#define STATE_BYTES (8u + 8u * ((1u << 28) / 256u))
#define PART_BYTES (STATE_BYTES > 4u * MAX_GROUPS ? STATE_BYTES : 4u * MAX_GROUPS)

/* scan1's shape: VKDS_BENCH_SCAN1, comma-separated words, a knob for trying shapes on a
 * device without rebuilding: rows|direct (the loads), a number 1..8 (uvec4 a thread),
 * g64..g1024 (threads a group), id (tiles by group id, not a counter), nolb (no
 * look-back: wrong output, the kernel's own time), w1..w4 (status words a lane reads a
 * look-back round), d<N> (N ALU steps between polls), nowait (the look-back reads the
 * window once and never waits: wrong output), vol (status words by plain coherent
 * volatile loads and stores, not atomics), sh (rows: the scanned tile waits out the
 * look-back in shared memory), i<N> (N ALU steps before the look-back's first poll).
 * Default: rows,5,g1024,w1,d0,i0 (the fastest measured on an H100: 0.95x CUB for u32 at
 * 2^28; bench/RESULTS.md, 2026-11-26). */
static void scan1_shape(plain_scan *s) {
  s->items4 = 5, s->rows = VK_TRUE, s->group = 1024, s->by_id = VK_FALSE, s->look_back = VK_TRUE;
  s->lb_words = 1, s->lb_delay = 0, s->lb_mode = 0, s->stash = VK_FALSE, s->lb_init = 0;
  const char *v = getenv("VKDS_BENCH_SCAN1");
  for (const char *w = v; w && *w;) {
    size_t len = strcspn(w, ",");
    long k = strtol(w + (*w == 'g' || *w == 'w' || *w == 'd' || *w == 'i'), NULL, 10);
    if (len && !strncmp(w, "rows", len)) s->rows = VK_TRUE;
    else if (len && !strncmp(w, "direct", len)) s->rows = VK_FALSE;
    else if (len && !strncmp(w, "id", len)) s->by_id = VK_TRUE;
    else if (len && !strncmp(w, "nolb", len)) s->look_back = VK_FALSE;
    else if (len && !strncmp(w, "nowait", len)) s->lb_mode = 1;
    else if (len && !strncmp(w, "vol", len)) s->lb_mode = 2;
    else if (len && !strncmp(w, "sh", len)) s->stash = VK_TRUE;
    else if (*w == 'g' && (k == 64 || k == 128 || k == 256 || k == 512 || k == 1024)) s->group = (uint32_t)k;
    else if (*w == 'w' && k >= 1 && k <= 4) s->lb_words = (uint32_t)k;
    else if (*w == 'd' && k >= 0 && k <= 100000) s->lb_delay = (uint32_t)k;
    else if (*w == 'i' && len > 1 && k >= 0 && k <= 100000) s->lb_init = (uint32_t)k;
    else if (k >= 1 && k <= 8) s->items4 = (uint32_t)k;
    w += len + (w[len] == ',');
  }
}

/* VKDS_PIPELINE_STATS (which makes vkds enable VK_KHR_pipeline_executable_properties on
 * its devices): the plain kernels' statistics on stderr as vkds prints its own
 * (lib/kernel/kernel.c), to compare registers with vkds's kernel of the same shape. */
static void print_statistics(VkDevice dev, VkPipeline pipeline, uint32_t items4, uint32_t group,
                             PFN_vkGetPipelineExecutableStatisticsKHR get) {
  VkPipelineExecutableInfoKHR ei = {.sType = VK_STRUCTURE_TYPE_PIPELINE_EXECUTABLE_INFO_KHR, .pipeline = pipeline};
  VkPipelineExecutableStatisticKHR st[32];
  uint32_t m = 32;
  for (uint32_t i = 0; i < m; ++i) st[i] = (VkPipelineExecutableStatisticKHR){
      .sType = VK_STRUCTURE_TYPE_PIPELINE_EXECUTABLE_STATISTIC_KHR};
  VkResult r = get(dev, &ei, &m, st);
  if (r != VK_SUCCESS && r != VK_INCOMPLETE) return;
  fprintf(stderr, "vkds: pipeline plain_scan (%u x %u uvec4):", group, items4);
  for (uint32_t i = 0; i < m; ++i)
    if (st[i].format == VK_PIPELINE_EXECUTABLE_STATISTIC_FORMAT_UINT64_KHR)
      fprintf(stderr, " %s=%llu%s", st[i].name, (unsigned long long)st[i].value.u64, i + 1 < m ? "," : "");
  fputc('\n', stderr);
}

/* scan3 reads constant 0 only; scan1 all eleven. */
static VkResult make_pipeline(plain_scan *s, VkShaderModule module, VkBool32 is_float, VkPipeline *out) {
  uint32_t data[11] = {is_float,  s->items4,   s->rows,     s->group,   s->by_id,           s->look_back,
                       s->lb_words, s->lb_delay, s->lb_mode, s->stash && s->rows, s->lb_init};
  VkSpecializationMapEntry e[11];
  for (uint32_t i = 0; i < 11; ++i) e[i] = (VkSpecializationMapEntry){i, 4 * i, 4};
  VkSpecializationInfo spec = {.mapEntryCount = 11, .pMapEntries = e, .dataSize = sizeof data, .pData = data};
  VkComputePipelineCreateInfo cpci = {
      .sType = VK_STRUCTURE_TYPE_COMPUTE_PIPELINE_CREATE_INFO,
      .stage = {.sType = VK_STRUCTURE_TYPE_PIPELINE_SHADER_STAGE_CREATE_INFO, .stage = VK_SHADER_STAGE_COMPUTE_BIT,
                .module = module, .pName = "main", .pSpecializationInfo = &spec},
      .layout = s->layout};
  const char *stats = getenv("VKDS_PIPELINE_STATS");
  /* (NULL where vkds did not enable the extension: no such device, or no such wish) */
  PFN_vkGetPipelineExecutableStatisticsKHR get =
      stats && *stats && strcmp(stats, "0") != 0
          ? (PFN_vkGetPipelineExecutableStatisticsKHR)vkGetDeviceProcAddr(s->dev, "vkGetPipelineExecutableStatisticsKHR")
          : NULL;
  if (get) cpci.flags = VK_PIPELINE_CREATE_CAPTURE_STATISTICS_BIT_KHR;
  VkResult r = vkCreateComputePipelines(s->dev, VK_NULL_HANDLE, 1, &cpci, NULL, out);
  if (r == VK_SUCCESS && get) print_statistics(s->dev, *out, s->items4, s->group, get);
  return r;
}

typedef struct params {
  uint32_t count4, per, pass;
} params;

int plain_scan_open(plain_scan *s, vkds_resource *res) {
  *s = (plain_scan){0};
  VkPhysicalDevice phys;
  vkds_resource_vk_handles(res, &phys, &s->dev, NULL);
  VkPhysicalDeviceProperties props;
  vkGetPhysicalDeviceProperties(phys, &props);
  s->max_groups = props.limits.maxComputeWorkGroupCount[0];
  s->single_pass = props.deviceType != VK_PHYSICAL_DEVICE_TYPE_CPU;
  scan1_shape(s);
  while (s->group > 64 && (s->group > props.limits.maxComputeWorkGroupSize[0] ||
                           s->group > props.limits.maxComputeWorkGroupInvocations))
    s->group /= 2; /* the default's 1024 threads where the device takes them */
  VkDescriptorSetLayoutBinding b[3];
  for (uint32_t i = 0; i < 3; ++i)
    b[i] = (VkDescriptorSetLayoutBinding){.binding = i, .descriptorType = VK_DESCRIPTOR_TYPE_STORAGE_BUFFER,
                                          .descriptorCount = 1, .stageFlags = VK_SHADER_STAGE_COMPUTE_BIT};
  VkDescriptorSetLayoutCreateInfo dci = {.sType = VK_STRUCTURE_TYPE_DESCRIPTOR_SET_LAYOUT_CREATE_INFO,
                                         .bindingCount = 3, .pBindings = b};
  VkPushConstantRange pr = {.stageFlags = VK_SHADER_STAGE_COMPUTE_BIT, .size = sizeof(params)};
  VkPipelineLayoutCreateInfo lci = {.sType = VK_STRUCTURE_TYPE_PIPELINE_LAYOUT_CREATE_INFO, .setLayoutCount = 1,
                                    .pSetLayouts = &s->set_layout, .pushConstantRangeCount = 1,
                                    .pPushConstantRanges = &pr};
  VkShaderModuleCreateInfo mci = {.sType = VK_STRUCTURE_TYPE_SHADER_MODULE_CREATE_INFO,
                                  .codeSize = sizeof vkds_spirv_scan3, .pCode = vkds_spirv_scan3},
                           mci1 = {.sType = VK_STRUCTURE_TYPE_SHADER_MODULE_CREATE_INFO,
                                   .codeSize = sizeof vkds_spirv_scan1, .pCode = vkds_spirv_scan1};
  if (vkCreateDescriptorSetLayout(s->dev, &dci, NULL, &s->set_layout) != VK_SUCCESS ||
      vkCreatePipelineLayout(s->dev, &lci, NULL, &s->layout) != VK_SUCCESS ||
      vkCreateShaderModule(s->dev, &mci, NULL, &s->module) != VK_SUCCESS ||
      vkCreateShaderModule(s->dev, &mci1, NULL, &s->module1) != VK_SUCCESS)
    goto fail;
  for (uint32_t f = 0; f < 2; ++f)
    if (make_pipeline(s, s->module, f, &s->pipeline[f]) != VK_SUCCESS ||
        make_pipeline(s, s->module1, f, &s->pipeline1[f]) != VK_SUCCESS)
      goto fail;
  VkDescriptorPoolSize ps = {.type = VK_DESCRIPTOR_TYPE_STORAGE_BUFFER, .descriptorCount = 3 * PLAIN_SCAN_SETS};
  VkDescriptorPoolCreateInfo dpci = {.sType = VK_STRUCTURE_TYPE_DESCRIPTOR_POOL_CREATE_INFO,
                                     .maxSets = PLAIN_SCAN_SETS, .poolSizeCount = 1, .pPoolSizes = &ps};
  VkDescriptorSetLayout layouts[PLAIN_SCAN_SETS];
  for (uint32_t i = 0; i < PLAIN_SCAN_SETS; ++i) layouts[i] = s->set_layout;
  VkDescriptorSetAllocateInfo dsai = {.sType = VK_STRUCTURE_TYPE_DESCRIPTOR_SET_ALLOCATE_INFO,
                                      .descriptorSetCount = PLAIN_SCAN_SETS, .pSetLayouts = layouts};
  if (vkCreateDescriptorPool(s->dev, &dpci, NULL, &s->pool) != VK_SUCCESS) goto fail;
  dsai.descriptorPool = s->pool;
  if (vkAllocateDescriptorSets(s->dev, &dsai, s->sets) != VK_SUCCESS ||
      bench_vk_buffer_create(res, PART_BYTES, VK_BUFFER_USAGE_STORAGE_BUFFER_BIT | VK_BUFFER_USAGE_TRANSFER_DST_BIT,
                             VK_MEMORY_PROPERTY_DEVICE_LOCAL_BIT, 0, &s->part) != 0)
    goto fail;
  return 0;
fail:
  plain_scan_close(s);
  return 1;
}

void plain_scan_close(plain_scan *s) {
  if (!s->dev) return;
  bench_vk_buffer_destroy(&s->part);
  if (s->pool) vkDestroyDescriptorPool(s->dev, s->pool, NULL);
  for (uint32_t f = 0; f < 2; ++f) {
    if (s->pipeline[f]) vkDestroyPipeline(s->dev, s->pipeline[f], NULL);
    if (s->pipeline1[f]) vkDestroyPipeline(s->dev, s->pipeline1[f], NULL);
  }
  if (s->module) vkDestroyShaderModule(s->dev, s->module, NULL);
  if (s->module1) vkDestroyShaderModule(s->dev, s->module1, NULL);
  if (s->layout) vkDestroyPipelineLayout(s->dev, s->layout, NULL);
  if (s->set_layout) vkDestroyDescriptorSetLayout(s->dev, s->set_layout, NULL);
  *s = (plain_scan){0};
}

void plain_scan_bind(plain_scan *s, uint32_t set, VkBuffer in, VkDeviceSize in_offset, VkBuffer out,
                     VkDeviceSize out_offset, VkDeviceSize bytes) {
  VkDescriptorBufferInfo dbi[3] = {{.buffer = in, .offset = in_offset, .range = bytes},
                                   {.buffer = out, .offset = out_offset, .range = bytes},
                                   {.buffer = s->part.buffer, .offset = 0, .range = PART_BYTES}};
  VkWriteDescriptorSet w = {.sType = VK_STRUCTURE_TYPE_WRITE_DESCRIPTOR_SET, .dstSet = s->sets[set],
                            .descriptorCount = 3, .descriptorType = VK_DESCRIPTOR_TYPE_STORAGE_BUFFER,
                            .pBufferInfo = dbi};
  vkUpdateDescriptorSets(s->dev, 1, &w, 0, NULL);
}

void plain_scan_record(const plain_scan *s, VkCommandBuffer cmd, uint32_t set, bool is_float, uint64_t words) {
  const VkPipelineStageFlags shader = VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT,
                             any = shader | VK_PIPELINE_STAGE_TRANSFER_BIT;
  uint64_t tiles = (words + TILE_WORDS - 1) / TILE_WORDS;
  uint64_t groups = tiles < MAX_GROUPS ? tiles : MAX_GROUPS, per = groups ? (tiles + groups - 1) / groups : 1;
  groups = (tiles + per - 1) / per;
  params pc = {.count4 = (uint32_t)(words / 4), .per = (uint32_t)per};
  vkCmdBindPipeline(cmd, VK_PIPELINE_BIND_POINT_COMPUTE, s->pipeline[is_float]);
  vkCmdBindDescriptorSets(cmd, VK_PIPELINE_BIND_POINT_COMPUTE, s->layout, 0, 1, &s->sets[set], 0, NULL);
  for (uint32_t pass = 0; pass < 3; ++pass) {
    bench_global_barrier(cmd, pass ? shader : any, shader);
    pc.pass = pass;
    vkCmdPushConstants(cmd, s->layout, VK_SHADER_STAGE_COMPUTE_BIT, 0, sizeof pc, &pc);
    vkCmdDispatch(cmd, pass == 1 ? 1 : (uint32_t)(groups ? groups : 1), 1, 1);
  }
  bench_global_barrier(cmd, shader, any | VK_PIPELINE_STAGE_HOST_BIT);
}

void plain_scan1_record(const plain_scan *s, VkCommandBuffer cmd, uint32_t set, bool is_float, uint64_t words) {
  const VkPipelineStageFlags shader = VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT,
                             transfer = VK_PIPELINE_STAGE_TRANSFER_BIT;
  uint64_t tile_words = 4u * s->group * s->items4, tiles = (words + tile_words - 1) / tile_words;
  /* by id: a group a tile (where the device takes that many; the bench's sizes fit on
   * GPUs); else as many as it takes, each taking tiles until none is left */
  uint64_t groups = tiles < s->max_groups ? tiles : s->max_groups;
  struct {
    uint32_t count4, tiles;
  } pc = {(uint32_t)(words / 4), (uint32_t)tiles};
  bench_global_barrier(cmd, shader | transfer, transfer); /* the last scan's reads of the state are done */
  vkCmdFillBuffer(cmd, s->part.buffer, 0, (8 + 8 * tiles + 3) & ~(VkDeviceSize)3, 0);
  bench_global_barrier(cmd, shader | transfer, shader);
  vkCmdBindPipeline(cmd, VK_PIPELINE_BIND_POINT_COMPUTE, s->pipeline1[is_float]);
  vkCmdBindDescriptorSets(cmd, VK_PIPELINE_BIND_POINT_COMPUTE, s->layout, 0, 1, &s->sets[set], 0, NULL);
  vkCmdPushConstants(cmd, s->layout, VK_SHADER_STAGE_COMPUTE_BIT, 0, sizeof pc, &pc);
  vkCmdDispatch(cmd, (uint32_t)(groups ? groups : 1), 1, 1);
  bench_global_barrier(cmd, shader, shader | transfer | VK_PIPELINE_STAGE_HOST_BIT);
}

// shaders/algorithm/sort_main.glsl: the entry of each sort kernel (after sort_tile.glsl
// and the kernel's own file). VKDS_SORT_KERNEL (sort.c) says which stages it has:
//   0  upsweep and plan (sort_upsweep.glsl)
//   1  portable count and spine, 2  portable scatter (sort_portable.glsl)
//   3  onesweep (sort_onesweep.glsl)
// and the stage in P(4) picks one. A pass whose plan says it does not run returns at once
// (onesweep's still zeroes the next pass's states).
void main() {
  uint stage = vkds_stage(), pass = vkds_pass();
#if VKDS_SORT_KERNEL == 0
  if (stage == VKDS_STAGE_UPSWEEP) vkds_upsweep();
  else vkds_make_plan();
#elif VKDS_SORT_KERNEL == 3
  vkds_onesweep(pass, vkds_plan(pass));
#else
  uint plan = vkds_plan(pass);
  if ((plan & 1u) != 0u) vkds_portable(stage, pass, (plan & 2u) != 0u);
#endif
}

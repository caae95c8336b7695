// shaders/algorithm/sort_main.glsl: the sort kernel's entry (after sort_onesweep.glsl):
// the stage in P(4) picks the work; a pass whose plan says it does not run returns at
// once (onesweep's still zeroes the next pass's states).
void main() {
  uint stage = vkds_stage(), pass = vkds_pass();
  if (stage == VKDS_STAGE_UPSWEEP) {
    vkds_upsweep();
    return;
  }
  if (stage == VKDS_STAGE_PLAN) {
    vkds_make_plan();
    return;
  }
  uint plan = vkds_plan(pass);
  if (stage == VKDS_STAGE_ONESWEEP) {
    vkds_onesweep(pass, plan);
    return;
  }
  if ((plan & 1u) != 0u) vkds_portable(stage, pass, (plan & 2u) != 0u);
}

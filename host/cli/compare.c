/* `sapsim compare`: the same scene, initial state and controls stepped by sapsim and
 * by MuJoCo's own mj_step, side by side. Prints, every tenth of the run, the height
 * of each free-floating base in both and the largest hinge/slide joint difference,
 * then one JSON line with the whole-run figures (and the largest activation difference
 * when the scene has actuator states). SAP's compliant contact and MuJoCo's
 * soft constraints are different models: the differences are reported, not judged.
 * Beside them, a baseline: MuJoCo against itself with the other friction cone (pyramidal
 * <-> elliptic; sapsim solves the elliptic cone), the spread two valid MuJoCo settings give
 * on the same run (0 where no contact or friction acts). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <mujoco/mujoco.h>

#include "cli.h"
#include "json.h"

/* worst |q_sap - q_mj| over hinge and slide joints, and over free-joint heights */
static void differences(const mjModel* mj, const double* qs, const double* qm, double* dq, double* dz) {
  *dq = *dz = 0;
  for (int j = 0; j < mj->njnt; j++) {
    int a = mj->jnt_qposadr[j], t = mj->jnt_type[j];
    if (t == mjJNT_HINGE || t == mjJNT_SLIDE) *dq = fmax(*dq, fabs(qs[a] - qm[a]));
    if (t == mjJNT_FREE) *dz = fmax(*dz, fabs(qs[a + 2] - qm[a + 2]));
  }
}

/* height of the first free joint's body (NAN without one) */
static double base_height(const mjModel* mj, const double* q) {
  for (int j = 0; j < mj->njnt; j++)
    if (mj->jnt_type[j] == mjJNT_FREE) return q[mj->jnt_qposadr[j] + 2];
  return NAN;
}

int sapcli_compareMain(sapCli* cli) {
  int n = cli->worlds[0], rc = 1;
  sapModel* m = NULL;
  sapSim* s = NULL;
  mjModel* mj = NULL;
  mjData **md = NULL, **mc = NULL;  /* MuJoCo as the scene says, and with the other cone */
  mjModel* mjc = NULL;
  double *ctrl = NULL, *qs = NULL, *as = NULL;
  char err[1000] = "";
  if (sap_loadModel(cli->scene, &m) != SAP_OK || sap_create(m, &cli->opt, n, &s) != SAP_OK) {
    fprintf(stderr, "sapsim: %s\n", sap_lastError());
    goto done;
  }
  if (!(mj = mj_loadXML(cli->scene, NULL, err, sizeof(err)))) {
    fprintf(stderr, "sapsim: MuJoCo: %s\n", err);
    goto done;
  }
  int key = sapcli_keyframe(m, cli);
  if (key < -1 || sap_reset(s, key, NULL) != SAP_OK) goto done;
  ctrl = calloc((size_t)n * m->nu + 1, sizeof(double));
  qs = malloc(sizeof(double) * n * m->nq);
  as = malloc(sizeof(double) * n * m->na + 1);
  md = calloc(n, sizeof(mjData*));
  mc = calloc(n, sizeof(mjData*));
  mjc = mj_copyModel(NULL, mj);
  mjc->opt.cone = mj->opt.cone == mjCONE_ELLIPTIC ? mjCONE_PYRAMIDAL : mjCONE_ELLIPTIC;
  sapcli_randomCtrl(m, n, cli->ctrl_noise, cli->seed, ctrl);
  if (m->nu && sap_set(s, SAP_FIELD_CTRL, NULL, n, ctrl) != SAP_OK) goto fail;
  for (int w = 0; w < n; w++) {
    md[w] = mj_makeData(mj);
    mc[w] = mj_makeData(mjc);
    if (key >= 0) mj_resetDataKeyframe(mj, md[w], key);
    if (key >= 0) mj_resetDataKeyframe(mjc, mc[w], key);
    if (m->nu) memcpy(md[w]->ctrl, ctrl + (size_t)w * m->nu, sizeof(double) * m->nu);
    if (m->nu) memcpy(mc[w]->ctrl, ctrl + (size_t)w * m->nu, sizeof(double) * m->nu);
  }
  double h = sap_options(s)->timestep;  /* resolved (the scene's unless overridden) */
  if (fabs(h - mj->opt.timestep) > 1e-15)
    printf("note: sapsim steps with dt %g, MuJoCo with the scene's %g\n", h, mj->opt.timestep);
  printf("scene %s, %d world(s), %d steps of %g s, preset %s; MuJoCo %s (%s cone, %s integrator)\n",
         cli->scene, n, cli->steps, h, sapo_valueName("preset", sap_options(s)->preset), mj_versionString(),
         mj->opt.cone == mjCONE_ELLIPTIC ? "elliptic" : "pyramidal",
         mj->opt.integrator == mjINT_EULER ? "Euler" : mj->opt.integrator == mjINT_RK4 ? "RK4" : "implicit");
  printf("%8s %14s %14s %16s %16s %18s\n", "time", "base z sapsim", "base z MuJoCo", "max |dq| joints",
         "max |dz| bases", "MuJoCo cones |dq|");
  double worst_q = 0, worst_z = 0, sum_q = 0, worst_c = 0, sum_c = 0, worst_act = 0;
  long nsum = 0;
  int every = cli->steps >= 10 ? cli->steps / 10 : 1;
  for (int k = 1; k <= cli->steps; k++) {
    if (sap_step(s, 1) != SAP_OK || sap_get(s, SAP_FIELD_QPOS, NULL, n, qs) != SAP_OK) goto fail;
    if (m->na && sap_get(s, SAP_FIELD_ACT, NULL, n, as) != SAP_OK) goto fail;
    double dq_step = 0, dz_step = 0, dc_step = 0;
    for (int w = 0; w < n; w++) {
      mj_step(mj, md[w]);
      mj_step(mjc, mc[w]);
      double dq, dz, dc, dcz;
      differences(mj, qs + (size_t)w * m->nq, md[w]->qpos, &dq, &dz);
      differences(mj, mc[w]->qpos, md[w]->qpos, &dc, &dcz);
      /* activations (integrator, filter, muscle states): they follow ctrl alone */
      for (int i = 0; i < m->na; i++) worst_act = fmax(worst_act, fabs(as[(size_t)w * m->na + i] - md[w]->act[i]));
      dq_step = fmax(dq_step, dq);
      dz_step = fmax(dz_step, dz);
      dc_step = fmax(dc_step, dc);
      sum_q += dq;
      sum_c += dc;
      nsum++;
    }
    worst_q = fmax(worst_q, dq_step);
    worst_z = fmax(worst_z, dz_step);
    worst_c = fmax(worst_c, dc_step);
    if (k % every == 0 || k == cli->steps)
      printf("%8.3f %14.5f %14.5f %16.3e %16.3e %18.3e\n", k * h, base_height(mj, qs),
             base_height(mj, md[0]->qpos), dq_step, dz_step, dc_step);
  }
  /* the whole run as one JSON line; the base heights are null without a free-floating base */
  char line[2048];
  sapjWriter j;
  sapj_begin(&j, line, sizeof(line));
  sapj_str(&j, "scene", cli->scene);
  sapj_int(&j, "nworld", n);
  sapj_int(&j, "nstep", cli->steps);
  sapj_num(&j, "dt", h, 6);
  sapj_str(&j, "preset", sapo_valueName("preset", sap_options(s)->preset));
  sapj_num(&j, "max_joint_diff", worst_q, 6);
  sapj_num(&j, "mean_joint_diff", nsum ? sum_q / nsum : 0.0, 6);
  sapj_num(&j, "max_base_height_diff", worst_z, 6);
  sapj_num(&j, "max_joint_diff_mujoco_cones", worst_c, 6);
  sapj_num(&j, "mean_joint_diff_mujoco_cones", nsum ? sum_c / nsum : 0.0, 6);
  if (m->na) sapj_num(&j, "max_act_diff", worst_act, 6);
  sapj_num(&j, "final_base_z_sapsim", base_height(mj, qs), 6);
  sapj_num(&j, "final_base_z_mujoco", base_height(mj, md[0]->qpos), 6);
  if (!sapj_end(&j)) {
    fprintf(stderr, "sapsim compare: the JSON line passes %d bytes (scene path too long?)\n", (int)sizeof(line));
    goto done;
  }
  printf("%s\n", line);
  rc = 0;
  goto done;
fail:
  fprintf(stderr, "sapsim: %s\n", sap_lastError());
done:
  for (int w = 0; w < n; w++) {
    if (md) mj_deleteData(md[w]);
    if (mc) mj_deleteData(mc[w]);
  }
  free(md);
  free(mc);
  if (mjc) mj_deleteModel(mjc);
  if (mj) mj_deleteModel(mj);
  free(ctrl);
  free(qs);
  free(as);
  sap_free(s);
  sap_freeModel(m);
  return rc;
}

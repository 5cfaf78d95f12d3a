/* MuJoCo 4's sleeping trees, per world (model.sleep; MuJoCo's src/engine/engine_sleep.c:
 * mj_wake, mj_wakeCollision, mj_wakeEquality, mj_sleep, and their calls in mj_step). Reference
 * version (CPU backend; the CUDA backend refuses model.sleep).
 * State: sapData.tree_asleep in MuJoCo's encoding: < 0 awake, counting up from
 * SAP_SLEEP_AWAKE = -(1 + SAP_MINAWAKE) by one per step while the tree could sleep (-1: ready);
 * >= 0 asleep, the next tree of the sleeping island's cycle (ascending tree order, the last
 * back to the first). A step of world w, in MuJoCo's order:
 *   1. sapw_wakeUser: a sleeping tree wakes (with its cycle, at SAP_SLEEP_AWAKE) when its qpos
 *      changed since the last step (MuJoCo: its pose mismatch), or it has a nonzero qvel,
 *      xfrc_applied or qfrc_applied (MuJoCo's treeCanSleep with tolerance 0; -0.0 counts
 *      as nonzero: MuJoCo tests bytes)
 *   2. collision without the pairs that have no awake side (sapw_sleepSkipPair: MuJoCo's
 *      filterBodyPair; a mocap body is awake, a static one is not), then sapw_wakeContacts:
 *      a contact (phi < 0: MuJoCo's dist < margin) of an awake side, or a mocap body, with a
 *      sleeping tree wakes that tree's cycle at the awake side's count (mocap: SAP_SLEEP_AWAKE);
 *      when some woke, collision again (MuJoCo runs mj_collision again, and wakes no further)
 *   3. sapw_wakeEquality: an active connect/weld/joint equality between a sleeping tree and an
 *      awake one (or a mocap body) wakes the sleeping one; between two sleeping trees of two
 *      cycles wakes both
 *   4. sapw_sleepDropContacts: contacts with a sleeping side leave the solve (MuJoCo keeps
 *      them in its solve, but never moves the sleeping side); free motion v* = 0 and no scalar
 *      row on sleeping dofs: they are in no island (kernels/sap_island_t.h) and cost no solve
 *   5. sapw_sleepRule, before the integration, on the step's start qvel: an awake tree that
 *      can sleep (policy, no applied force, max_j dof_length_j |qvel_j| < sleep_tolerance)
 *      counts up, else restarts at SAP_SLEEP_AWAKE; an island whose trees are all at -1 goes to
 *      sleep. Islands: union-find of the awake trees over contacts with phi < 0 and active
 *      equalities (MuJoCo's come from its constraint rows: the same links, since a tree's
 *      own rows do not join trees; sapsim's contact set is its own collision's)
 *   6. sapw_sleepFreeze after the integration: sleeping trees keep their start qpos, qvel = 0
 * sleep_work (2 ntree ints per world): the awake flags MuJoCo's loops read (tree_awake, not
 * updated inside a loop), and the union-find. */
#ifndef SAPSIM_SLEEP_H
#define SAPSIM_SLEEP_H

#include <math.h>

#include "sapsim/data.h"
#include "sapsim/model.h"
#include "sap_real.h"

/* world w's tree_asleep row and work rows */
SAP_HD int* sapw_treeAsleep(const sapModel* m, const sapData* d, int w) { return d->tree_asleep + (long)w * m->ntree; }

/* body b's sleep state from the tree_asleep row ta: 1 awake (an awake tree's body, or a mocap
 * body), 0 asleep, -1 static (MuJoCo's mjS_AWAKE / ASLEEP / STATIC) */
SAP_HD int sapw_bodyAwake(const sapModel* m, const int* ta, int b) {
  int t = m->body_treeid[b];
  if (t >= 0) return ta[t] < 0;
  return m->body_mocapid[m->body_rootid[b]] >= 0 ? 1 : -1;
}

/* the pair of geoms g0, g1 cannot touch an awake body: collision skips it */
SAP_HD int sapw_sleepSkipPair(const sapModel* m, const sapData* d, int w, int g0, int g1) {
  if (!m->sleep) return 0;
  const int* ta = sapw_treeAsleep(m, d, w);
  return sapw_bodyAwake(m, ta, m->geom_bodyid[g0]) != 1 && sapw_bodyAwake(m, ta, m->geom_bodyid[g1]) != 1;
}

/* x is not all zero bytes (MuJoCo's !mju_isZeroByte: -0.0 counts) */
SAP_HD int sapw_nonzeroBytes(const double* x, int n) {
  for (int i = 0; i < n; i++)
    if (x[i] != 0 || signbit(x[i])) return 1;
  return 0;
}

/* MuJoCo's treeCanSleep: policy, no applied force, weighted velocity below tol (tol 0: exactly
 * zero bytes) */
SAP_HD int sapw_treeCanSleep(const sapModel* m, const sapData* d, int w, int t, double tol) {
  int pol = m->tree_sleep_policy[t];
  if (pol == SAP_SLEEP_NEVER || pol == SAP_SLEEP_AUTO_NEVER) return 0;
  if (sapw_nonzeroBytes(d->xfrc_applied + ((long)w * m->nbody + m->tree_bodyadr[t]) * 6, 6 * m->tree_bodynum[t]))
    return 0;
  int adr = m->tree_dofadr[t], num = m->tree_dofnum[t];
  if (sapw_nonzeroBytes(d->qfrc_applied + (long)w * m->nv + adr, num)) return 0;
  const double* v = d->qvel + (long)w * m->nv + adr;
  if (tol == 0) return !sapw_nonzeroBytes(v, num);
  double mx = 0;
  for (int j = 0; j < num; j++) {
    double a = m->dof_length[adr + j] * fabs(v[j]);
    mx = a > mx ? a : mx;
    if (mx >= tol) return 0;
  }
  return 1;
}

/* MuJoCo's mj_wakeIsland: an awake tree i takes min(wakeval, its count); a sleeping one wakes
 * with its whole cycle at wakeval. Returns the trees woken. */
SAP_HD int sapw_wakeIsland(int* ta, int ntree, int i, int wakeval) {
  if (ta[i] < 0) {
    ta[i] = wakeval < ta[i] ? wakeval : ta[i];
    return 0;
  }
  int cur = i, n = 0;
  do {
    int next = ta[cur];
    ta[cur] = wakeval;
    n++;
    cur = next;
  } while (cur != i && cur >= 0 && cur < ntree && n < ntree);
  return n;
}

/* the qpos range [lo, hi) of tree t (MuJoCo's order: a tree's joints' coordinates follow one
 * another) */
SAP_HD void sapw_treeQpos(const sapModel* m, int t, int* lo, int* hi) {
  int a = m->nq, b = 0;
  for (int bd = m->tree_bodyadr[t]; bd < m->tree_bodyadr[t] + m->tree_bodynum[t]; bd++)
    for (int j = m->body_jntadr[bd]; j < m->body_jntadr[bd] + m->body_jntnum[bd]; j++) {
      int ty = m->jnt_type[j], n = ty == SAP_JNT_FREE ? 7 : ty == SAP_JNT_BALL ? 4 : 1;
      int q = m->jnt_qposadr[j];
      a = q < a ? q : a;
      b = q + n > b ? q + n : b;
    }
  *lo = a < b ? a : 0;
  *hi = a < b ? b : 0;
}

/* step 1 (MuJoCo's mj_kinematics1 pose test and mj_wake), then the step's start qpos is kept in
 * sleep_qpos (sapw_sleepFreeze restores sleeping trees from it). Returns the trees woken. */
SAP_HD int sapw_wakeUser(const sapModel* m, const sapData* d, int w) {
  int* ta = sapw_treeAsleep(m, d, w);
  int* moved = d->sleep_work + (long)w * 2 * m->ntree;
  const double* q = d->qpos + (long)w * m->nq;
  double* q0 = d->sleep_qpos + (long)w * m->nq;
  int n = 0;
  for (int t = 0; t < m->ntree; t++) {
    moved[t] = 0;
    if (ta[t] < 0) continue;
    int lo, hi;
    sapw_treeQpos(m, t, &lo, &hi);
    for (int k = lo; k < hi; k++) moved[t] |= q[k] != q0[k];
  }
  for (int t = 0; t < m->ntree; t++)
    if (ta[t] >= 0 && (moved[t] || !sapw_treeCanSleep(m, d, w, t, 0))) n += sapw_wakeIsland(ta, m->ntree, t, SAP_SLEEP_AWAKE);
  for (int k = 0; k < m->nq; k++) q0[k] = q[k];
  return n;
}

/* step 2's wake (MuJoCo's mj_wakeCollision) over the contact list; returns the trees woken */
SAP_HD int sapw_wakeContacts(const sapModel* m, const sapData* d, int w) {
  int* ta = sapw_treeAsleep(m, d, w);
  int* awake = d->sleep_work + (long)w * 2 * m->ntree;
  for (int t = 0; t < m->ntree; t++) awake[t] = ta[t] < 0;
  int n = 0, nc = d->ncon[w] < d->ncon_max ? d->ncon[w] : d->ncon_max;
  for (int i = 0; i < nc; i++) {
    long ci = (long)w * d->ncon_max + i;
    if (!(d->con_dist[ci] < 0)) continue;  // no MuJoCo contact (dist >= margin)
    int b1 = m->geom_bodyid[d->con_geom[2 * ci]], b2 = m->geom_bodyid[d->con_geom[2 * ci + 1]];
    int t1 = m->body_treeid[b1], t2 = m->body_treeid[b2];
    if (t1 < 0 || t2 < 0) {  // a dof-less side: wakes when it is a mocap body
      int t = t1 < 0 ? t2 : t1, b = t1 < 0 ? b1 : b2;
      if (t >= 0 && !awake[t] && m->body_mocapid[m->body_rootid[b]] >= 0)
        n += sapw_wakeIsland(ta, m->ntree, t, SAP_SLEEP_AWAKE);
      continue;
    }
    if (awake[t1] == awake[t2]) continue;
    int sleeping = awake[t1] ? t2 : t1, val = awake[t1] ? ta[t1] : ta[t2];
    n += sapw_wakeIsland(ta, m->ntree, sleeping, val);
  }
  return n;
}

/* the first tree of the cycle through tree i (MuJoCo's mj_sleepCycle: its smallest) */
SAP_HD int sapw_sleepCycle(const int* ta, int ntree, int i) {
  int smallest = i, cur = i, count = 0;
  do {
    int next = ta[cur];
    if (count++ > ntree || next < 0 || next >= ntree) return -1;
    smallest = next < smallest ? next : smallest;
    cur = next;
  } while (cur != i);
  return smallest;
}

/* the trees (t1, t2) and bodies of equality e's two sides (-1: none or the world) */
SAP_HD void sapw_eqTrees(const sapModel* m, int e, int* b1, int* b2) {
  int id1 = m->eq_obj1id[e], id2 = m->eq_obj2id[e];
  if (m->eq_type[e] == SAP_EQ_JOINT) {
    *b1 = id1 >= 0 ? m->jnt_bodyid[id1] : -1;
    *b2 = id2 >= 0 ? m->jnt_bodyid[id2] : -1;
  } else {
    *b1 = id1;
    *b2 = id2;
  }
}

/* step 3 (MuJoCo's mj_wakeEquality); returns the trees woken */
SAP_HD int sapw_wakeEquality(const sapModel* m, const sapData* d, int w) {
  int* ta = sapw_treeAsleep(m, d, w);
  int* awake = d->sleep_work + (long)w * 2 * m->ntree;
  for (int t = 0; t < m->ntree; t++) awake[t] = ta[t] < 0;
  int n = 0;
  for (int e = 0; e < m->neq; e++) {
    if (!d->eq_active[(long)w * m->neq + e] || m->eq_type[e] == SAP_EQ_TENDON) continue;
    int b1, b2;
    sapw_eqTrees(m, e, &b1, &b2);
    int t1 = b1 >= 0 ? m->body_treeid[b1] : -1, t2 = b2 >= 0 ? m->body_treeid[b2] : -1;
    int s1 = t1 >= 0 ? awake[t1] : b1 >= 0 && m->body_mocapid[m->body_rootid[b1]] >= 0 ? 1 : -1;
    int s2 = t2 >= 0 ? awake[t2] : b2 >= 0 && m->body_mocapid[m->body_rootid[b2]] >= 0 ? 1 : -1;
    if ((s1 != 0 && s2 != 0) || s1 < 0 || s2 < 0 || t1 == t2) continue;
    if (s1 == 0 && s2 == 0) {
      if (sapw_sleepCycle(ta, m->ntree, t1) != sapw_sleepCycle(ta, m->ntree, t2)) {
        n += sapw_wakeIsland(ta, m->ntree, t1, SAP_SLEEP_AWAKE);
        n += sapw_wakeIsland(ta, m->ntree, t2, SAP_SLEEP_AWAKE);
      }
      continue;
    }
    n += sapw_wakeIsland(ta, m->ntree, s1 == 0 ? t1 : t2, SAP_SLEEP_AWAKE);
  }
  return n;
}

/* step 4: contacts with a sleeping side leave the list (kept in order) */
SAP_HD void sapw_sleepDropContacts(const sapModel* m, const sapData* d, int w) {
  const int* ta = sapw_treeAsleep(m, d, w);
  int nc = d->ncon[w] < d->ncon_max ? d->ncon[w] : d->ncon_max, k = 0;
  for (int i = 0; i < nc; i++) {
    long ci = (long)w * d->ncon_max + i, ck = (long)w * d->ncon_max + k;
    int b1 = m->geom_bodyid[d->con_geom[2 * ci]], b2 = m->geom_bodyid[d->con_geom[2 * ci + 1]];
    if (sapw_bodyAwake(m, ta, b1) == 0 || sapw_bodyAwake(m, ta, b2) == 0) continue;
    if (k != i) {
      for (int j = 0; j < 2; j++) d->con_geom[2 * ck + j] = d->con_geom[2 * ci + j];
      for (int j = 0; j < 6; j++) d->con_pos[6 * ck + j] = d->con_pos[6 * ci + j];
      for (int j = 0; j < 9; j++) d->con_frame[9 * ck + j] = d->con_frame[9 * ci + j];
      d->con_dist[ck] = d->con_dist[ci];
      d->con_mu[ck] = d->con_mu[ci];
      d->con_k[ck] = d->con_k[ci];
      d->con_taud[ck] = d->con_taud[ci];
    }
    k++;
  }
  d->ncon[w] = k;
}

/* 1 when dof j is on a sleeping tree */
SAP_HD int sapw_dofAsleep(const sapModel* m, const sapData* d, int w, int j) {
  return m->sleep && d->tree_asleep[(long)w * m->ntree + m->dof_treeid[j]] >= 0;
}

/* 1 when every tree of world w sleeps */
SAP_HD int sapw_allAsleep(const sapModel* m, const sapData* d, int w) {
  const int* ta = sapw_treeAsleep(m, d, w);
  for (int t = 0; t < m->ntree; t++)
    if (ta[t] < 0) return 0;
  return 1;
}

/* union-find root of tree x (path halving) */
SAP_HD int sapw_sleepFind(int* uf, int x) {
  while (uf[x] != x) {
    uf[x] = uf[uf[x]];
    x = uf[x];
  }
  return x;
}

SAP_HD void sapw_sleepUnion(int* uf, int a, int b) {
  a = sapw_sleepFind(uf, a);
  b = sapw_sleepFind(uf, b);
  if (a < b) uf[b] = a;
  else if (b < a) uf[a] = b;
}

/* step 5 (MuJoCo's mj_sleep) on the start qvel; a tree put to sleep gets vnext = 0 (its
 * solved velocity). Returns the trees put to sleep. */
SAP_HD int sapw_sleepRule(const sapModel* m, const sapData* d, int w) {
  int nt = m->ntree, n = 0;
  int* ta = sapw_treeAsleep(m, d, w);
  int* uf = d->sleep_work + (long)w * 2 * nt + nt;
  for (int t = 0; t < nt; t++) {
    uf[t] = t;
    if (ta[t] >= 0) continue;
    if (sapw_treeCanSleep(m, d, w, t, m->sleep_tolerance)) ta[t] += ta[t] < -1;
    else ta[t] = SAP_SLEEP_AWAKE;
  }
  // islands of the awake trees: contacts (MuJoCo's, phi < 0) and active equalities
  int nc = d->ncon[w] < d->ncon_max ? d->ncon[w] : d->ncon_max;
  for (int i = 0; i < nc; i++) {
    long ci = (long)w * d->ncon_max + i;
    if (!(d->con_dist[ci] < 0)) continue;
    int t1 = m->body_treeid[m->geom_bodyid[d->con_geom[2 * ci]]];
    int t2 = m->body_treeid[m->geom_bodyid[d->con_geom[2 * ci + 1]]];
    if (t1 >= 0 && t2 >= 0 && ta[t1] < 0 && ta[t2] < 0) sapw_sleepUnion(uf, t1, t2);
  }
  for (int e = 0; e < m->neq; e++) {
    if (!d->eq_active[(long)w * m->neq + e] || m->eq_type[e] == SAP_EQ_TENDON) continue;
    int b1, b2;
    sapw_eqTrees(m, e, &b1, &b2);
    int t1 = b1 >= 0 ? m->body_treeid[b1] : -1, t2 = b2 >= 0 ? m->body_treeid[b2] : -1;
    if (t1 >= 0 && t2 >= 0 && ta[t1] < 0 && ta[t2] < 0) sapw_sleepUnion(uf, t1, t2);
  }
  for (int t = 0; t < nt; t++) uf[t] = sapw_sleepFind(uf, t);
  // an island (its root is its smallest tree) sleeps when each of its trees is at -1
  for (int r = 0; r < nt; r++) {
    if (uf[r] != r || ta[r] != -1) continue;
    int ok = 1, first = -1, prev = -1;
    for (int t = r; t < nt && ok; t++)
      if (uf[t] == r && ta[t] != -1) ok = 0;
    if (!ok) continue;
    for (int t = r; t < nt; t++) {  // the cycle in ascending tree order
      if (uf[t] != r) continue;
      if (prev >= 0) ta[prev] = t;
      else first = t;
      prev = t;
      double* vn = d->vnext + (long)w * m->nv + m->tree_dofadr[t];
      for (int j = 0; j < m->tree_dofnum[t]; j++) vn[j] = 0;
      n++;
    }
    ta[prev] = first;
  }
  return n;
}

/* step 6, after the integration: sleeping trees keep the step's start qpos, qvel = 0 (and the
 * warm start's previous velocity) */
SAP_HD void sapw_sleepFreeze(const sapModel* m, const sapData* d, int w) {
  const int* ta = sapw_treeAsleep(m, d, w);
  double* q = d->qpos + (long)w * m->nq;
  const double* q0 = d->sleep_qpos + (long)w * m->nq;
  for (int t = 0; t < m->ntree; t++) {
    if (ta[t] < 0) continue;
    int lo, hi;
    sapw_treeQpos(m, t, &lo, &hi);
    for (int k = lo; k < hi; k++) q[k] = q0[k];
    int adr = m->tree_dofadr[t];
    for (int j = adr; j < adr + m->tree_dofnum[t]; j++)
      d->qvel[(long)w * m->nv + j] = d->vnext[(long)w * m->nv + j] = 0;
  }
}

#endif

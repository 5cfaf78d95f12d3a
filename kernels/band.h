/* Speculative contacts by speed (option contact_band=speed, CPU backend; issue 16).
 *
 * The speculative band (contact_margin, 2 cm by default) lists contacts before their surfaces
 * meet, so that a contact a step will close acts in that step. A listed contact that stays
 * idle costs its narrow phase and its place in the solve for nothing; in a resting pile most
 * of them do (box_pile: about 126 box-box pairs per world-step inside the band, 13 touching).
 *
 * SAP's cone leaves a contact idle (no impulse, cone region 0) when vn >= vhat_n + mu |vt|,
 * vhat_n = -phi / (h + taud) (sap_cone_t.h, up to SAP's 1e-7 soft-norm term). If S bounds the
 * relative speed of the two surfaces at the contact, vn >= -S and |vt| <= S, so a contact is
 * idle whenever (1 + mu)(h + taud) S <= phi. With s_g a bound on the speed of any point of
 * geom g's inflated bounding sphere (sapw_geomSpeed below), S <= s_0 + s_1.
 *
 * So each step gives every geom a speed budget b_g from its speed at the last answer s_g
 * (SAP_BAND_GAIN s_g + SAP_BAND_GAIN |gravity| h + SAP_BAND_VMIN; infinite when s_g is not
 * known: the first step, after a reset), and a candidate pair p is left out whole when a lower
 * bound on its geoms' distance (sapw_bandApart) exceeds its band,
 *   band_p = margin_p + (1 + mu_p)(h + taud_p)(b_0 + b_1),
 * the pair's MJCF margin plus its speculative band: each of its contacts would have
 * phi >= (1 + mu_p)(h + taud_p)(b_0 + b_1). Every other pair goes through the narrow phase with
 * its whole detection distance, so the list is the whole band's less whole pairs. After the
 * solve each geom of a left-out pair has its speed at the answer compared with its budget: when
 * none outran its budget, every left-out contact is idle at the answer, so the answer minimizes
 * the whole band's problem too (its cost terms are zero around it: the same convex problem's
 * optimum, to the solver's tolerance). When one did, the world's collision and solve are redone
 * with the whole band (host/step.c sapc_stageSolve), the step then being the margin mode's bit
 * for bit, and sapData.band_redo says so.
 *
 * Pairs the band never leaves out: adhesive pairs (an adhesive contact pulls at any speed),
 * pairs with an MJCF gap (the gap band is MuJoCo's listed-but-inactive region, adhesion's too)
 * and heightfield pairs; a plane or heightfield that turns has no speed bound (infinite
 * budget). */
#ifndef SAPSIM_BAND_H
#define SAPSIM_BAND_H

#include "sapsim/data.h"
#include "sapsim/model.h"
#include "sap_real.h"

#define SAP_BAND_GAIN 2.0   /* budget: twice the last speed and twice gravity's gain in a step */
#define SAP_BAND_VMIN 0.01  /* m/s: and at least this (a resting geom's) */
#define SAP_BAND_INF ((double)INFINITY)

/* a bound on the surface speed of geom g at any point of its inflated bounding sphere
 * (sap_world_t.h sapw_droppedIdle, sapw_geomSpeed below): |v_g| + |w_g| (rbound_g + 2 detect_g);
 * infinite for an unbounded geom (plane, heightfield) that turns */
SAP_HD double sapw_surfaceSpeedBound(const sapModel* m, int g) {
  if (!m->nsurfacevel) return 0;
  const double* u = m->geom_surfacevel + 6 * g;
  double v = sqrt(u[0] * u[0] + u[1] * u[1] + u[2] * u[2]), om = sqrt(u[3] * u[3] + u[4] * u[4] + u[5] * u[5]);
  if (om == 0) return v;
  if (!(m->geom_rbound[g] > 0)) return SAP_BAND_INF;
  return v + om * (m->geom_rbound[g] + 2 * m->geom_detect[g]);
}

/* world w's speed budgets for a step of h (geom_vbudget, band_h; band_redo and the left-out
 * marks band_out cleared) */
SAP_HD void sapw_bandBudgets(const sapModel* m, const sapData* d, int w, double h) {
  const double* g = m->gravity;
  double gh = SAP_BAND_GAIN * sqrt(g[0] * g[0] + g[1] * g[1] + g[2] * g[2]) * h + SAP_BAND_VMIN;
  const double* s = d->geom_vspeed + (long)w * m->ngeom;
  double* b = d->geom_vbudget + (long)w * m->ngeom;
  int* out = d->band_out + (long)w * m->ngeom;
  for (int k = 0; k < m->ngeom; k++) {
    b[k] = s[k] >= 0 && s[k] < SAP_BAND_INF ? SAP_BAND_GAIN * s[k] + gh : SAP_BAND_INF;
    out[k] = 0;
  }
  d->band_h[w] = h;
  d->band_redo[w] = 0;
}

/* the whole band for world w's step (the redo): every budget infinite, no pair left out */
SAP_HD void sapw_bandWhole(const sapModel* m, const sapData* d, int w) {
  double* b = d->geom_vbudget + (long)w * m->ngeom;
  int* out = d->band_out + (long)w * m->ngeom;
  for (int k = 0; k < m->ngeom; k++) b[k] = SAP_BAND_INF, out[k] = 0;
}

/* pair p's band in world w under contact_band=speed (m: the world's view, its pair material):
 * the pair's MJCF margin plus (1 + mu)(h + taud)(b_0 + b_1); infinite for a pair the band
 * never leaves out (adhesion, gap: above) */
SAP_HD double sapw_bandDetect(const sapModel* m, const sapData* d, int w, int p) {
  if (m->pair_gap[p] > 0 || (m->nadhesion && m->pair_adhesion[p] != 0)) return SAP_BAND_INF;
  const double* b = d->geom_vbudget + (long)w * m->ngeom;
  double mu = m->pair_mu[p] > 0 ? m->pair_mu[p] : 0, taud = m->pair_taud[p] > 0 ? m->pair_taud[p] : 0;
  double bb = b[m->pair_geom[2 * p]] + b[m->pair_geom[2 * p + 1]];
  double band = m->pair_margin[p] + (1 + mu) * (d->band_h[w] + taud) * bb;
  return band == band ? band : SAP_BAND_INF;  // NaN: never left out
}

/* the half extent of geom g along unit direction L (its support function: the largest
 * x . L - c . L over the geom's points x, c its centre): exact for spheres, capsules,
 * cylinders, ellipsoids and boxes, the bounding sphere's radius for the others (meshes);
 * negative when unknown (a plane or heightfield) */
SAP_HD double sapw_bandExtent(const sapModel* m, const double* R, int g, const double* L) {
  const double* s = m->geom_size + 3 * g;
  double a[3];  // L in the geom's frame: R's columns are its axes
  for (int k = 0; k < 3; k++) a[k] = R[k] * L[0] + R[3 + k] * L[1] + R[6 + k] * L[2];
  switch (m->geom_type[g]) {
    case SAP_GEOM_SPHERE: return s[0];
    case SAP_GEOM_CAPSULE: return s[0] + s[1] * fabs(a[2]);
    case SAP_GEOM_CYLINDER: return s[0] * sqrt(fmax(0.0, 1 - a[2] * a[2])) + s[1] * fabs(a[2]);
    case SAP_GEOM_ELLIPSOID:
      return sqrt(s[0] * s[0] * a[0] * a[0] + s[1] * s[1] * a[1] * a[1] + s[2] * s[2] * a[2] * a[2]);
    case SAP_GEOM_BOX: return s[0] * fabs(a[0]) + s[1] * fabs(a[1]) + s[2] * fabs(a[2]);
    default: return m->geom_rbound[g] > 0 ? m->geom_rbound[g] : -1;
  }
}

/* whether geoms g0, g1 of one world (xpos, xmat: its geom poses) are certainly farther apart
 * than dist: a lower bound on their distance over separating directions L (the line of
 * centres and each geom's three axes; a plane's normal, the half-space below it solid),
 * |(c_1 - c_0) . L| - e_0(L) - e_1(L) (sapw_bandExtent), above dist by more than rounding.
 * 0 when not shown, and for a heightfield */
SAP_HD int sapw_bandApart(const sapModel* m, const double* xpos, const double* xmat, int g0, int g1, double dist) {
  int t0 = m->geom_type[g0], t1 = m->geom_type[g1];
  if (t0 == SAP_GEOM_HFIELD || t1 == SAP_GEOM_HFIELD) return 0;
  const double *c0 = xpos + 3 * g0, *c1 = xpos + 3 * g1, *R0 = xmat + 9 * g0, *R1 = xmat + 9 * g1;
  double dc[3] = {c1[0] - c0[0], c1[1] - c0[1], c1[2] - c0[2]};
  double slack = 1e-9 * (fabs(dc[0]) + fabs(dc[1]) + fabs(dc[2]) + m->geom_rbound[g0] + m->geom_rbound[g1] +
                         fabs(dist));
  if (t0 == SAP_GEOM_PLANE || t1 == SAP_GEOM_PLANE) {  // the other centre's height over the plane
    int p = t0 == SAP_GEOM_PLANE ? g0 : g1, o = p == g0 ? g1 : g0;
    const double *Rp = xmat + 9 * p, *cp = xpos + 3 * p, *co = xpos + 3 * o;
    double n[3] = {Rp[2], Rp[5], Rp[8]};
    double e = sapw_bandExtent(m, xmat + 9 * o, o, n);
    double hgt = n[0] * (co[0] - cp[0]) + n[1] * (co[1] - cp[1]) + n[2] * (co[2] - cp[2]);
    return e >= 0 && hgt - e > dist + slack;
  }
  double l = sqrt(dc[0] * dc[0] + dc[1] * dc[1] + dc[2] * dc[2]);
  for (int a = 0; a < 7; a++) {  // the line of centres, g0's axes, g1's axes
    double L[3];
    if (a == 0) {
      if (!(l > 0)) continue;
      for (int k = 0; k < 3; k++) L[k] = dc[k] / l;
    } else {
      const double* R = a < 4 ? R0 : R1;
      for (int k = 0; k < 3; k++) L[k] = R[3 * k + (a - 1) % 3];
    }
    double e0 = sapw_bandExtent(m, R0, g0, L), e1 = sapw_bandExtent(m, R1, g1, L);
    if (e0 < 0 || e1 < 0) return 0;
    if (fabs(dc[0] * L[0] + dc[1] * L[1] + dc[2] * L[2]) - e0 - e1 > dist + slack) return 1;
  }
  return 0;
}

/* pair p of world w (geoms g0, g1; xpos, xmat: the world's geom poses) left out by the band:
 * 1 when its distance certainly exceeds its band (its geoms marked in band_out for the check) */
SAP_HD int sapw_bandLeaveOut(const sapModel* m, const sapData* d, int w, int p, const double* xpos,
                             const double* xmat, int g0, int g1) {
  double band = sapw_bandDetect(m, d, w, p);
  if (!(band < m->pair_detect[p]) || !sapw_bandApart(m, xpos, xmat, g0, g1, band)) return 0;
  int* out = d->band_out + (long)w * m->ngeom;
  out[g0] = out[g1] = 1;
  return 1;
}

/* the bodies' spatial velocities [omega; v at cref_b] of world w at velocity v, each sum
 * cdof_j v_j over the dofs of the body and its ancestors (cdof: the step's, from the free
 * motion; sap_solve.h sapw_contactSlip), into V (7 per body, the 7th 1 when the body can move) */
SAP_HD void sapw_bandBodies(const sapModel* m, const sapData* d, int w, const double* v, double* V) {
  const double* cdof = d->cdof + (long)w * m->nv * 6;
  for (int k = 0; k < 7; k++) V[k] = 0;  // the world
  for (int b = 1; b < m->nbody; b++) {  // parents first
    double* Vb = V + 7 * b;
    const double* Vp = V + 7 * m->body_parentid[b];
    for (int k = 0; k < 7; k++) Vb[k] = Vp[k];
    for (int j = m->body_dofadr[b]; j < m->body_dofadr[b] + m->body_dofnum[b]; j++) {
      for (int k = 0; k < 6; k++) Vb[k] += cdof[6 * j + k] * v[j];
      Vb[6] = 1;
    }
  }
}

/* s_g of geom g of world w from its body's velocity (sapw_bandBodies): |v(x_g)| + |omega|
 * (rbound_g + 2 detect_g) plus its surface velocity's bound, a bound on the speed of any point
 * of its inflated bounding sphere; the surface velocity's alone for a geom that cannot move;
 * infinite for a moving geom without a bounding sphere (a plane or heightfield on a moving
 * body). Rounded up by 1e-9 relative for the sums' rounding */
SAP_HD double sapw_geomSpeed(const sapModel* m, const sapData* d, int w, int g, const double* V) {
  int b = m->geom_bodyid[g];
  const double* Vb = V + 7 * b;
  double ss = sapw_surfaceSpeedBound(m, g);  // a surface velocity moves the material too
  if (Vb[6] == 0) return ss;
  if (!(m->geom_rbound[g] > 0)) return SAP_BAND_INF;
  const double* xg = d->geom_xpos + ((long)w * m->ngeom + g) * 3;
  const double* cref = d->cref + ((long)w * m->nbody + b) * 3;
  double r[3], u[3], vv = 0, om = 0;
  for (int k = 0; k < 3; k++) r[k] = xg[k] - cref[k];
  u[0] = Vb[3] + Vb[1] * r[2] - Vb[2] * r[1];
  u[1] = Vb[4] + Vb[2] * r[0] - Vb[0] * r[2];
  u[2] = Vb[5] + Vb[0] * r[1] - Vb[1] * r[0];
  for (int k = 0; k < 3; k++) {
    vv += u[k] * u[k];
    om += Vb[k] * Vb[k];
  }
  return (sqrt(vv) + sqrt(om) * (m->geom_rbound[g] + 2 * m->geom_detect[g]) + ss) * (1 + 1e-9);
}

/* doubles of work space sapw_bandCheck uses (sapData.band_work) */
SAP_HD long sapw_bandWorkDoubles(const sapModel* m) { return 7L * m->nbody; }

/* after world w's solve with answer v: each geom's speed bound there into geom_vspeed (the
 * next step's budgets). Returns 0 when a geom of a left-out pair outran its budget (one of its
 * contacts may act at v), 1 when every left-out contact is idle at v (or none was left out). V:
 * sapw_bandWorkDoubles of work space */
SAP_HD int sapw_bandCheck(const sapModel* m, const sapData* d, int w, const double* v, double* V) {
  double* s = d->geom_vspeed + (long)w * m->ngeom;
  const double* b = d->geom_vbudget + (long)w * m->ngeom;
  int ok = 1;
  sapw_bandBodies(m, d, w, v, V);
  const int* out = d->band_out + (long)w * m->ngeom;
  for (int g = 0; g < m->ngeom; g++) {
    s[g] = sapw_geomSpeed(m, d, w, g, V);
    if (out[g] && !(s[g] <= b[g])) ok = 0;  // a NaN speed fails too
  }
  return ok;
}

#endif

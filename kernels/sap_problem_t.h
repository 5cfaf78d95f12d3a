/* One world's SAP problem and its constraint operators (template body in the contact
 * objective precision; include via sap_solve.h):
 *   l(v) = 1/2 (v - v*)' A (v - v*) + sum_c l_c(J_c v) + sum_s l_s(S_s v)
 * The contact Jacobian is never stored as a matrix. J v runs as one pass down the body tree
 * (body velocities about each tree's reference point, then the point velocities in the contact
 * frames), J' gamma as one pass up it (contact forces as body wrenches, summed into the
 * parents, projected on the dof motions), and the Newton matrix term J_c' G J_c walks the two
 * dof chains of each contact (sapw_contactRows; the CPU keeps each contact's rows over its
 * chain dofs for the rest of the solve, sapw_contactRowsCached, in its per-thread buffer).
 * Scalar rows S_s are stored sparse: at most snz (dof, coefficient) entries each. This keeps
 * the solver's memory per world independent of nv x contact capacity. */

/* the Newton loop's state between iterations: in registers when the whole loop runs in one
 * kernel, in the world's scratch when each iteration is its own launch (newton_loop=while or
 * fixed, kernels/solve.cu) */
typedef struct SAPT(sapLoop) {
  SAP_REAL cost, mom;  /* l(v) and its momentum part 1/2 (v - v*)' A (v - v*) at the iterate */
  int cost_ok;         /* the last step passed the cost test */
  int active;          /* still iterating (no stop rule met yet) */
  int solve;           /* the world has constraints: v is the answer (else vnext is written) */
  int ns;              /* scalar rows */
  sapSolveStats st;    /* iterations done, line-search iterations, factorizations, stop flags */
} SAPT(sapLoop);

typedef struct SAPT(sapProblem) {
  int nv, nc, ns;           /* dofs, contacts, scalar constraints */
  int cd;                   /* rows per contact: 3, or 4 / 6 (torsion, rolling; m->ncondim) */
  const double* A;          /* (nA) dynamics matrix by dof-tree blocks, fp64 storage */
  const int* Aadr;          /* (nv) A[i][j] at A + Aadr[i] + j over i's tree range [tlo, thi)
                               (sapModel.dof_Aadr; a dense nv x nv A: i nv) */
  const double* vstar;      /* (nv) free-motion velocity */
  const double* vprev;      /* (nv) the velocity before qvel (sapData.vnext at solve time: the
                               integration swaps them), qvel after a reset or a qvel edit */
  /* contact kinematics (world arrays of sapData at this world) */
  const sapModel* m;        /* body tree, dof chains, geom bodies and stiffness */
  const double* cdof;       /* (nv x 6) dof motions [angular; linear] about cref */
  const double* cref;       /* (nbody x 3) reference point of each body's tree */
  const int* con_geom;      /* (nc x 2) geoms of each contact */
  const double* con_pos;    /* (nc x 6) witness points on geom 0 and geom 1 */
  const double* con_frame;  /* (nc x 9) rows t1, t2, n; vc = frame (V1 - V0) */
  int midpoint;             /* velocity point: stiffness-weighted midpoint, else the witnesses */
  double kdef;              /* geom stiffness where a geom has none (midpoint weights) */
  /* scalar rows */
  int snz;                  /* entries per row */
  int* sidx;                /* (ns x snz) dofs, -1 after a row's last entry */
  double* sval;             /* (ns x snz) coefficients */
  int* stag;                /* (ns) what each row constrains (SAP_ROW_TAG), -1 after the last */
  SAP_REAL* cpar;           /* (nc x SAP_CPAR_OF(cd)) cone parameters */
  SAP_REAL* spar;           /* (ns x SAP_SPAR) box parameters */
  SAP_REAL* dscale;         /* (nv) diag(A)^-1/2 on participating dofs, 0 elsewhere */
  /* what the one-lane solve visits (sapw_participation): a dof that takes part in no
     constraint keeps v = v* and zeros in every vector below, a body of its tree no velocity or
     wrench, so the dof and body loops of the CPU Newton skip them (a world of objects at rest,
     asleep or apart, pays per constrained tree, not per dof) */
  int nadof, nabody;        /* -1: every one (before sapw_participation); sapw_dofAt, sapw_bodyAt */
  int* adof;                /* (nv) the participating dofs, ascending */
  int* abody;               /* (nbody) the static bodies and those of participating trees, ascending */
  SAP_REAL *v, *r, *grad, *jc, *dv, *Adv, *pstar; /* (nv) iterate, A(v-v*), gradient, J'gamma, step, A dv, A v* */
  SAP_REAL *vc, *dvc, *gam; /* (cd nc + ns) constraint velocities, J dv, impulses */
  SAP_REAL* H;              /* (nv x nv, or the islands' storage: hoff) Newton matrix (lower
                               triangle); L's entries when the linear solve runs in the
                               objective's precision */
  void* L;                  /* (nv x (nv + 1), or the islands' storage + nv) factor and right-hand
                               side, linear-solve precision */
  long lrhs;                /* the right-hand sides at L + lrhs + ibeg[k]: nv x nv in the carve */
  /* H and L outside the carve (the CPU's one-lane solve): when hl_grow is set, sapw_carve
     leaves them out and sapw_islandOffsets asks hl_grow(hl_ctx, bytes) for the islands'
     storage only (+ nv right-hand sides, + bofs) instead of nv^2: n_k^2 per dense island,
     its pattern's blocks per block-sparse one, so a world of many small islands needs memory
     linear in its dofs and one large pile its factor's blocks. A null answer sets hl_fail
     (the solve stops) */
  void* (*hl_grow)(void* ctx, long bytes);
  void* hl_ctx;
  int hl_fail;
  void* Lfast;              /* GPU warp solve: L's place in shared memory, or null (use L) */
  SAP_REAL* body6;          /* (nbody x 6) body velocities or wrenches of the tree passes */
  SAP_REAL* rows;           /* (cd x nv) one contact's Jacobian rows, zero outside its chains */
  int* chain;               /* (nv) the dofs of one contact's chains */
  /* each contact's Jacobian rows over its chain dofs, made once per solve at the first Newton
     matrix that needs them (sapw_contactRowsCached) instead of at every iteration: in the H and
     L buffer after L (hl_grow, the CPU's one-lane solve), else none (jmax 0) */
  int jmax;                 /* dofs per contact cached: SAP_SOLVE_NCHAIN, 0 without a cache */
  int* jn;                  /* (nc) contact i's chain length, -1 until made */
  int* jdof;                /* (nc x jmax) its chain dofs in sapw_contactChain's order */
  SAP_REAL* jrow;           /* (nc x cd x jmax) its rows: J_i[r][jdof[p]] at jrow[(cd i + r) jmax + p] */
  /* contact points, once per solve (sapw_contactPoints): every J v, J' gamma and Jacobian row
     of contact i reads them instead of recomputing them from the witnesses (the same values) */
  SAP_REAL* cpt;            /* (nc x 6) velocity point of sides 0, 1 about its tree's cref, or
                               null: computed at each use (sapw_contactPoint) */
  SAP_REAL* cptw;           /* (c x 6) cpt's storage */
  int* cbody;               /* (c x 2) body of sides 0, 1 (with cpt) */
  /* islands (sap_island_t.h): the dofs split into connected components of the dof trees (A's
     diagonal blocks) linked by contacts and scalar rows; H and L hold one block per island */
  int nisl;                 /* islands; 0 until sapw_islands or sapw_islandsOne has run */
  int* isl;                 /* (nv) island of each dof, -1: no constraint reaches its tree (dv = 0) */
  int* iloc;                /* (nv) index of each dof in its island's block */
  int* idof;                /* (nv) the dofs by island, ascending within each */
  int* ibeg;                /* (nv + 1) island k's dofs: idof[ibeg[k] .. ibeg[k + 1]) */
  int *tlo, *thi;           /* (nv) dof range [tlo, thi) of each dof's tree: A's nonzero block */
  int *ipar, *iseg;         /* (nv) island k's a-th dof's parent, local: ipar[ibeg[k] + a], -1 at a
                               root, and its segment start (sapw_treeFactor) */
  int* itree;               /* (nv + 1) island k's flags: bit 0, it factors by its dof forest (no
                               fill) when its H keeps the forest's pattern (its flops pay against
                               the dense block); bit 1, the forest is in pre-order (iend holds
                               the subtrees: sapw_treeFactorPre); bit 2, besides, every row of A
                               is zero after its dof's subtree (A x stops there: sapw_treeDot) */
  int* iend;                /* (nv) island k's a-th dof's last descendant, local: iend[ibeg[k] + a]
                               (with itree bit 1) */
  long* hoff;               /* (nv + 1) island k's storage of H (and of L) at hoff[k], in entries:
                               n_k x n_k dense, or (ntr[k] > 0) only its trees' blocks (tbo, trk,
                               bofs); the right-hand side at L + lrhs + ibeg[k] */
  /* block-sparse factorization of islands of several trees (sap_island_t.h sapw_islandTrees,
     sap_block_t.h): per island k, at ibeg[k] + t for its trees t = 0 .. ntr[k] - 1 */
  int sparse;               /* 0: dense islands; 1: block-sparse where its flops pay (default);
                               2: always (islands of 2+ trees, minimum degree); 3: always, natural
                               tree order (tests) */
  int* ntr;                 /* (nv + 1) trees of island k when it factors block-sparse, else 0 */
  int* tix;                 /* (nv) each dof's tree index within its island */
  int *tst, *tord, *tpos;   /* (nv) tree t's first local dof, elimination order, its inverse */
  int* tbo;                 /* (nv) tree t's diagonal block (n_t x n_t, row-major) at hoff[k] + tbo[o + t],
                               o = ibeg[k]; then its column of L: the blocks L_ut (n_u x n_t) of
                               the trees u in its pattern row, ascending u (sap_block_t.h) */
  long* poff;               /* (nv + 1) island k's pattern: T_k x W_k words at tpat + poff[k] */
  unsigned* tpat;           /* (T W + W), T = min(nv, nbody) bounds the dof trees (each has a
                               dof and a body), W = ceil(T / 32): tree adjacency, then the
                               symbolic factor (bit u of tree v's row: L_uv != 0, u after v); the
                               last W words: the ordering's scratch. Linear in the trees for
                               separate objects, not nv^2 / 32 */
  int* trk;                 /* (T W in the carve, else up to the last block-sparse island's words,
                               after bofs) the pattern's block numbers: word w of tree v's row (at
                               poff[k] + v W_k + w) starts at block trk[...]; the block of tree u
                               in v's row is trk[.. u / 32] + the bits of that word below u */
  int* bofs;                /* (the islands' pattern blocks) each block's place from hoff[k], in
                               the order trk numbers them: in L past the right-hand sides when H and
                               L are grown, past the blocks in the carve (sapw_islandOffsets) */
  long nblk;                /* pattern blocks of every block-sparse island (bofs' length) */
  /* the island view (sapw_newtonIslands): with vk >= 0 the one-lane loops visit island vk
     alone (its dofs, its trees' bodies after every static body, its contacts and scalar
     rows, its block of H), so each island runs its own Newton loop; vk = -1: the whole problem */
  int vk;
  int nsbody;               /* static bodies (no dof on their chain), listed in sbody */
  int *icon, *cbeg;         /* (c), (nv + 2): island k's contacts icon[cbeg[k] .. cbeg[k + 1]) */
  int *irow, *rbeg;         /* (ns), (nv + 2): its scalar rows, the same way */
  int *ibody, *bbeg;        /* (nbody), (nv + 2): its trees' bodies, ascending */
  int* sbody;               /* (nbody) the static bodies, ascending (every view visits them) */
  int* vbody;               /* (nbody) the view's bodies: the static ones, then its trees' (abody
                               points here in a view, adof into idof: sapw_setView) */
  double* half;             /* (SAP_SOLVE_NHALF) the half step's frames of the equality rows under
                               the midpoint rule (sap_solve.h sapw_eqFrames); null without equalities */
  int lin_fp32;             /* the linear solve runs in fp32 */
  int lin_bytes;            /* its element size: 4 or 8 */
  SAP_REAL mom;             /* momentum cost 1/2 (v - v*)' A (v - v*) at v */
  SAP_REAL m1, m2;          /* line coefficients dv' A (v - v*), dv' A dv */
  SAPT(sapLoop)* loop;      /* the loop state of the per-iteration launches */
} SAPT(sapProblem);

/* carve a problem's scratch (8-byte aligned) into its arrays; returns its size in bytes,
 * every block a multiple of 8 bytes. With work NULL it only counts (the pointers stay
 * NULL): sapw_problemBytes is this carve, so the size cannot disagree with the layout
 * (tests/test_sap_math.c checks it with guard bytes). hl_carved 0 leaves H and L out: the
 * caller sets hl_grow, and sapw_islandOffsets places them by the islands' sizes */
SAP_HD long SAPT(sapw_carve)(SAPT(sapProblem)* P, void* work, int nv, int nbody, int c, int cd, int ns,
                             int snz, int lin_bytes, long nhalf, int hl_carved) {
  unsigned char* base = (unsigned char*)work;
  long R = sizeof(SAP_REAL), n = 0;
#define SAPW_TAKE(ptr, type, bytes) ptr = base ? (type)(base + n) : (type)0, n += ((long)(bytes) + 7) / 8 * 8
  SAPW_TAKE(P->sval, double*, 8 * (long)ns * snz);
  P->H = (SAP_REAL*)0;
  P->L = (void*)0;
  if (hl_carved) {  // else sapw_islandOffsets places them (hl_grow)
    if (lin_bytes != R) SAPW_TAKE(P->H, SAP_REAL*, R * nv * nv);
    SAPW_TAKE(P->L, void*, (long)lin_bytes * nv * (nv + 1));
    if (lin_bytes == R) P->H = (SAP_REAL*)P->L;  // same precision: factor H in place
  }
  P->lrhs = (long)nv * nv;
  P->lin_bytes = lin_bytes;
  P->hl_grow = 0;
  P->hl_ctx = (void*)0;
  P->hl_fail = 0;
  SAPW_TAKE(P->v, SAP_REAL*, R * (8 + cd) * nv);  // v and 8 more vectors, rows
  SAPW_TAKE(P->body6, SAP_REAL*, R * 6 * nbody);
  SAPW_TAKE(P->cpar, SAP_REAL*, R * (SAP_CPAR_OF(cd) * (long)c + SAP_SPAR * ns));  // cpar, spar
  SAPW_TAKE(P->vc, SAP_REAL*, R * 3 * (cd * (long)c + ns));                        // vc, dvc, gam
  SAPW_TAKE(P->sidx, int*, 4 * ((long)ns * snz + nv + ns));                        // sidx, chain, stag
  SAPW_TAKE(P->isl, int*, 4 * (10 * (long)nv + 2));  // isl, iloc, idof, tlo, thi, ibeg, ipar, iseg, itree, iend
  SAPW_TAKE(P->hoff, long*, 8 * ((long)nv + 1));
  SAPW_TAKE(P->ntr, int*, 4 * (6 * (long)nv + 1));  // ntr, tix, tst, tord, tpos, tbo
  SAPW_TAKE(P->poff, long*, 8 * ((long)nv + 1));
  long T = nv < nbody ? nv : nbody;  // the dof trees at most
  SAPW_TAKE(P->tpat, unsigned*, 4 * (T + 1) * ((T + 31) / 32));
  P->trk = (int*)0;
  if (hl_carved) SAPW_TAKE(P->trk, int*, 4 * T * ((T + 31) / 32));  // else with H and L (sapw_islandOffsets)
  SAPW_TAKE(P->loop, SAPT(sapLoop)*, sizeof(SAPT(sapLoop)));
  SAPW_TAKE(P->adof, int*, 4 * ((long)nv + nbody));  // adof, abody
  SAPW_TAKE(P->cptw, SAP_REAL*, R * 6 * (long)c);
  SAPW_TAKE(P->cbody, int*, 4 * 2 * (long)c);
  SAPW_TAKE(P->half, double*, 8 * nhalf);
  if (!nhalf) P->half = (double*)0;
  SAPW_TAKE(P->icon, int*, 4 * ((long)c + ns + 3L * nbody + 3L * (nv + 2)));  // the island views' lists
#undef SAPW_TAKE
  /* arrays that share a block (null when only counting) */
#define SAPW_AFTER(ptr, prev, off) ptr = base ? (prev) + (off) : 0
  SAP_REAL** vec[8] = {&P->r, &P->grad, &P->jc, &P->dv, &P->Adv, &P->pstar, &P->dscale, &P->rows};
  for (int k = 0; k < 8; k++) SAPW_AFTER(*vec[k], P->v, (long)(k + 1) * nv);  // rows takes cd nv
  SAPW_AFTER(P->spar, P->cpar, SAP_CPAR_OF(cd) * (long)c);
  SAPW_AFTER(P->dvc, P->vc, cd * (long)c + ns);
  SAPW_AFTER(P->gam, P->dvc, cd * (long)c + ns);
  SAPW_AFTER(P->chain, P->sidx, (long)ns * snz);
  SAPW_AFTER(P->stag, P->chain, nv);
  SAPW_AFTER(P->iloc, P->isl, nv);
  SAPW_AFTER(P->idof, P->iloc, nv);
  SAPW_AFTER(P->tlo, P->idof, nv);
  SAPW_AFTER(P->thi, P->tlo, nv);
  SAPW_AFTER(P->ibeg, P->thi, nv);
  SAPW_AFTER(P->ipar, P->ibeg, nv + 1);
  SAPW_AFTER(P->iseg, P->ipar, nv);
  SAPW_AFTER(P->itree, P->iseg, nv);
  SAPW_AFTER(P->iend, P->itree, nv + 1);
  SAPW_AFTER(P->tix, P->ntr, nv + 1);
  SAPW_AFTER(P->tst, P->tix, nv);
  SAPW_AFTER(P->tord, P->tst, nv);
  SAPW_AFTER(P->tpos, P->tord, nv);
  SAPW_AFTER(P->tbo, P->tpos, nv);
  SAPW_AFTER(P->abody, P->adof, nv);
  SAPW_AFTER(P->cbeg, P->icon, c);
  SAPW_AFTER(P->irow, P->cbeg, nv + 2);
  SAPW_AFTER(P->rbeg, P->irow, ns);
  SAPW_AFTER(P->ibody, P->rbeg, nv + 2);
  SAPW_AFTER(P->bbeg, P->ibody, nbody);
  SAPW_AFTER(P->sbody, P->bbeg, nv + 2);
  SAPW_AFTER(P->vbody, P->sbody, nbody);
#undef SAPW_AFTER
  P->cd = cd;
  P->nv = nv;
  P->snz = snz;
  P->Lfast = (void*)0;
  P->nisl = 0;
  P->nadof = P->nabody = -1;  // every dof and body until sapw_participation
  P->vk = -1;                 // the whole problem
  P->sparse = 0;
  P->bofs = (int*)0;
  P->nblk = 0;
  P->cpt = (SAP_REAL*)0;  // no cached points until sapw_contactPoints
  P->jmax = 0;            // no Jacobian row cache (sapw_islandOffsets places one with hl_grow)
  P->jn = P->jdof = (int*)0;
  P->jrow = (SAP_REAL*)0;
  return n;
}

/* bytes of one problem's scratch: its carve over a null arena */
SAP_HD long SAPT(sapw_problemBytes)(int nv, int nbody, int c, int cd, int ns, int snz, int lin_bytes, long nhalf,
                                    int hl_carved) {
  SAPT(sapProblem) P;
  return SAPT(sapw_carve)(&P, (void*)0, nv, nbody, c, cd, ns, snz, lin_bytes, nhalf, hl_carved);
}

/* ---- contact geometry ------------------------------------------------------------- */

/* body of side s (0, 1) of contact i and its velocity point relative to the body's tree
 * reference point: the witness x_s, or pC = a0 x0 + a1 x1 (contact_midpoint) */
SAP_HD int SAPT(sapw_contactPointAt)(const SAPT(sapProblem)* P, int i, int s, SAP_REAL x[3]) {
  const sapModel* m = P->m;
  int g0 = P->con_geom[2 * i], g1 = P->con_geom[2 * i + 1];
  int b = m->geom_bodyid[s ? g1 : g0];
  const double* x0 = P->con_pos + 6 * i;
  const double* cref = P->cref + 3 * b;
  double a0 = s ? 0 : 1;
  if (P->midpoint) a0 = sapw_midpointAlpha0(m->geom_k[g0], m->geom_k[g1], P->kdef);
  for (int k = 0; k < 3; k++) x[k] = (SAP_REAL)(a0 * x0[k] + (1 - a0) * x0[3 + k] - cref[k]);
  return b;
}

/* the same, from the points cached by sapw_contactPoints when there are any */
SAP_HD int SAPT(sapw_contactPoint)(const SAPT(sapProblem)* P, int i, int s, SAP_REAL x[3]) {
  if (!P->cpt) return SAPT(sapw_contactPointAt)(P, i, s, x);
  const SAP_REAL* c = P->cpt + 6 * i + 3 * s;
  x[0] = c[0];
  x[1] = c[1];
  x[2] = c[2];
  return P->cbody[2 * i + s];
}

/* cache every contact's two points (once the contact list, con_pos and cref are final);
 * a caller that changes the list drops the cache (P->cpt = 0) or calls this again */
SAP_HD void SAPT(sapw_contactPoints)(SAPT(sapProblem)* P) {
  P->cpt = (SAP_REAL*)0;
  for (int i = 0; i < P->nc; i++)
    for (int s = 0; s < 2; s++) P->cbody[2 * i + s] = SAPT(sapw_contactPointAt)(P, i, s, P->cptw + 6 * i + 3 * s);
  P->cpt = P->cptw;
}

#include "sap_spin_t.h" /* the torsional and rolling rows of condim 4 and 6 */

/* the a-th dof (body, contact, scalar row) that the one-lane loops visit, of sapw_ndof
 * (sapw_nbody, sapw_ncon, sapw_nrow): the participating ones of the whole problem, or island
 * vk's in a view (adof and abody then list the island's dofs and bodies: sapw_setView) */
SAP_HD int SAPT(sapw_ndof)(const SAPT(sapProblem)* P) { return P->nadof < 0 ? P->nv : P->nadof; }
SAP_HD int SAPT(sapw_dofAt)(const SAPT(sapProblem)* P, int a) { return P->nadof < 0 ? a : P->adof[a]; }
SAP_HD int SAPT(sapw_nbody)(const SAPT(sapProblem)* P) { return P->nabody < 0 ? P->m->nbody : P->nabody; }
SAP_HD int SAPT(sapw_bodyAt)(const SAPT(sapProblem)* P, int a) { return P->nabody < 0 ? a : P->abody[a]; }
SAP_HD int SAPT(sapw_ncon)(const SAPT(sapProblem)* P) { return P->vk < 0 ? P->nc : P->cbeg[P->vk + 1] - P->cbeg[P->vk]; }
SAP_HD int SAPT(sapw_conAt)(const SAPT(sapProblem)* P, int a) { return P->vk < 0 ? a : P->icon[P->cbeg[P->vk] + a]; }
SAP_HD int SAPT(sapw_nrow)(const SAPT(sapProblem)* P) { return P->vk < 0 ? P->ns : P->rbeg[P->vk + 1] - P->rbeg[P->vk]; }
SAP_HD int SAPT(sapw_rowAt)(const SAPT(sapProblem)* P, int a) { return P->vk < 0 ? a : P->irow[P->rbeg[P->vk] + a]; }
/* the dofs of the loop's own vectors (sap_loop_t.h warm start, step, commit): every dof of the
 * whole problem (the non-participating ones add exact zeros), island vk's in a view */
SAP_HD int SAPT(sapw_loopDofs)(const SAPT(sapProblem)* P) { return P->vk < 0 ? P->nv : SAPT(sapw_ndof)(P); }
SAP_HD int SAPT(sapw_loopDofAt)(const SAPT(sapProblem)* P, int a) { return P->vk < 0 ? a : SAPT(sapw_dofAt)(P, a); }

/* ---- J v: body velocities down the tree, then point velocities in contact frames ------ */
/* Each pass is written as per-item functions (a body component, a contact, a row, a dof) and
 * loops over them, so that the warp-cooperative solver (kernels/sap_warp_t.h) runs the same
 * items on its lanes. */

/* component k of body b's velocity [omega; v at cref] for the generalized velocity x, its
 * parent's already computed (parents come before children) */
SAP_HD void SAPT(sapw_bodyVelocity)(const SAPT(sapProblem)* P, const SAP_REAL* x, int b, int k) {
  const sapModel* m = P->m;
  SAP_REAL t = b > 0 ? P->body6[6 * m->body_parentid[b] + k] : 0;
  if (b > 0)
    for (int j = m->body_dofadr[b]; j < m->body_dofadr[b] + m->body_dofnum[b]; j++)
      t += (SAP_REAL)P->cdof[6 * j + k] * x[j];
  P->body6[6 * b + k] = t;
}

/* all six components of body b's velocity at once (the one-lane J v): per component the same
 * sum in the same order as sapw_bodyVelocity (parent's, then + cdof_jk x_j over b's dofs), so
 * the result is its bit for bit; the parent and dof range are read once instead of six times */
SAP_HD void SAPT(sapw_bodyVelocity6)(const SAPT(sapProblem)* P, const SAP_REAL* x, int b) {
  const sapModel* m = P->m;
  SAP_REAL t[6] = {0, 0, 0, 0, 0, 0};
  if (b > 0) {
    const SAP_REAL* Vp = P->body6 + 6 * m->body_parentid[b];
    for (int k = 0; k < 6; k++) t[k] = Vp[k];
    for (int j = m->body_dofadr[b], j1 = j + m->body_dofnum[b]; j < j1; j++) {
      const double* c = P->cdof + 6 * j;
      SAP_REAL xj = x[j];
      for (int k = 0; k < 6; k++) t[k] += (SAP_REAL)c[k] * xj;
    }
  }
  for (int k = 0; k < 6; k++) P->body6[6 * b + k] = t[k];
}

/* out[cd i .. cd i + cd - 1] = J_i x for contact i (after the body velocities of x): rows t1, t2, n
 * of the point velocity, then (cd > 3) n, t1, t2 of the relative angular velocity
 * (sapw_contactSpin) */
SAP_HD void SAPT(sapw_contactVelocity)(const SAPT(sapProblem)* P, int i, SAP_REAL* out) {
  SAP_REAL u[3] = {0, 0, 0};
  for (int s = 0; s < 2; s++) {
    SAP_REAL x[3];
    const SAP_REAL* V = P->body6 + 6 * SAPT(sapw_contactPoint)(P, i, s, x);
    SAP_REAL sign = s ? 1 : -1;  // vc = frame (V1 - V0)
    u[0] += sign * (V[3] + V[1] * x[2] - V[2] * x[1]);
    u[1] += sign * (V[4] + V[2] * x[0] - V[0] * x[2]);
    u[2] += sign * (V[5] + V[0] * x[1] - V[1] * x[0]);
  }
  const double* f = P->con_frame + 9 * i;
  SAP_REAL* o = out + (long)P->cd * i;
  for (int r = 0; r < 3; r++)
    o[r] = (SAP_REAL)f[3 * r] * u[0] + (SAP_REAL)f[3 * r + 1] * u[1] + (SAP_REAL)f[3 * r + 2] * u[2];
  if (P->cd > 3) SAPT(sapw_contactSpin)(P, i, o);
}

/* S_s x */
SAP_HD SAP_REAL SAPT(sapw_rowVelocity)(const SAPT(sapProblem)* P, int s, const SAP_REAL* x) {
  SAP_REAL t = 0;
  for (int k = s * P->snz; k < (s + 1) * P->snz && P->sidx[k] >= 0; k++) t += (SAP_REAL)P->sval[k] * x[P->sidx[k]];
  return t;
}

/* out = [J; S] x (cd nc + ns) */
SAP_HD void SAPT(sapw_constraintVelocities)(const SAPT(sapProblem)* P, const SAP_REAL* x, SAP_REAL* out) {
  if (P->nc > 0) {
    for (int a = 0, n = SAPT(sapw_nbody)(P); a < n; a++)
      SAPT(sapw_bodyVelocity6)(P, x, SAPT(sapw_bodyAt)(P, a));
    if (P->vk < 0)
      for (int i = 0; i < P->nc; i++) SAPT(sapw_contactVelocity)(P, i, out);
    else
      for (int a = 0, n = SAPT(sapw_ncon)(P); a < n; a++) SAPT(sapw_contactVelocity)(P, SAPT(sapw_conAt)(P, a), out);
  }
  if (P->vk < 0)
    for (int s = 0; s < P->ns; s++) out[P->cd * P->nc + s] = SAPT(sapw_rowVelocity)(P, s, x);
  else
    for (int a = 0, n = SAPT(sapw_nrow)(P); a < n; a++) {
      int s = SAPT(sapw_rowAt)(P, a);
      out[P->cd * P->nc + s] = SAPT(sapw_rowVelocity)(P, s, x);
    }
}

/* ---- J' gamma: contact wrenches up the tree, projected on the dof motions ------------- */

/* the wrench [torque; force] about cref of side s of contact i under the impulse gam_i;
 * returns the body it acts on */
SAP_HD int SAPT(sapw_contactWrench)(const SAPT(sapProblem)* P, int i, int s, const SAP_REAL* gam, SAP_REAL* F) {
  const double* fr = P->con_frame + 9 * i;
  const SAP_REAL* g = gam + (long)P->cd * i;
  SAP_REAL f[3], x[3], sign = s ? 1 : -1;  // world impulse on body 1: frame' gamma
  for (int k = 0; k < 3; k++)
    f[k] = sign * ((SAP_REAL)fr[k] * g[0] + (SAP_REAL)fr[3 + k] * g[1] + (SAP_REAL)fr[6 + k] * g[2]);
  int b = SAPT(sapw_contactPoint)(P, i, s, x);
  F[0] = x[1] * f[2] - x[2] * f[1];
  F[1] = x[2] * f[0] - x[0] * f[2];
  F[2] = x[0] * f[1] - x[1] * f[0];
  for (int k = 0; k < 3; k++) F[3 + k] = f[k];
  if (P->cd > 3) SAPT(sapw_spinTorque)(P, i, sign, g, F);
  return b;
}

/* component k of the subtree wrenches: children summed into parents (children come after
 * parents) */
SAP_HD void SAPT(sapw_subtreeWrenches)(const SAPT(sapProblem)* P, int k) {
  const sapModel* m = P->m;
  for (int b = m->nbody - 1; b > 0; b--) {
    int p = m->body_parentid[b];
    if (p > 0) P->body6[6 * p + k] += P->body6[6 * b + k];
  }
}

/* dof j's share of the subtree wrench of its body: cdof_j . F */
SAP_HD SAP_REAL SAPT(sapw_dofImpulse)(const SAPT(sapProblem)* P, int j) {
  const SAP_REAL* F = P->body6 + 6 * P->m->dof_bodyid[j];
  SAP_REAL t = 0;
  for (int k = 0; k < 6; k++) t += (SAP_REAL)P->cdof[6 * j + k] * F[k];
  return t;
}

/* out += S' gamma_s */
SAP_HD void SAPT(sapw_rowImpulses)(const SAPT(sapProblem)* P, const SAP_REAL* gam, SAP_REAL* out) {
  const SAP_REAL* gs = gam + P->cd * P->nc;
  for (int a = 0, n = SAPT(sapw_nrow)(P); a < n; a++)
    for (int s = SAPT(sapw_rowAt)(P, a), k = s * P->snz; k < (s + 1) * P->snz && P->sidx[k] >= 0; k++)
      out[P->sidx[k]] += (SAP_REAL)P->sval[k] * gs[s];
}

/* contact i has no impulse (idle: cone region 0); J' gamma skips it (it would add zeros) */
SAP_HD int SAPT(sapw_contactIdle)(const SAPT(sapProblem)* P, int i, const SAP_REAL* gam) {
  const SAP_REAL* g = gam + (long)P->cd * i;
  for (int r = 0; r < P->cd; r++)
    if (g[r] != 0) return 0;
  return 1;
}

/* out = J' gamma + S' gamma_s on the visited dofs (sapw_dofAt; the others' entries stay 0) */
SAP_HD void SAPT(sapw_generalizedImpulse)(const SAPT(sapProblem)* P, const SAP_REAL* gam, SAP_REAL* out) {
  const sapModel* m = P->m;
  int nd = SAPT(sapw_ndof)(P);
  for (int a = 0; a < nd; a++) out[SAPT(sapw_dofAt)(P, a)] = 0;
  if (P->nc > 0) {
    int nb = SAPT(sapw_nbody)(P);
    if (P->vk < 0)
      for (int k = 0; k < 6 * m->nbody; k++) P->body6[k] = 0;
    else  // a view: its bodies (the statics among them), every contact wrench lands there
      for (int a = 0; a < nb; a++)
        for (int k = 0, b = SAPT(sapw_bodyAt)(P, a); k < 6; k++) P->body6[6 * b + k] = 0;
    for (int a = 0, nci = SAPT(sapw_ncon)(P); a < nci; a++)
      for (int s = 0, i = SAPT(sapw_conAt)(P, a); s < 2 && !SAPT(sapw_contactIdle)(P, i, gam); s++) {
        SAP_REAL F[6];
        SAP_REAL* Fb = P->body6 + 6 * SAPT(sapw_contactWrench)(P, i, s, gam, F);
        for (int k = 0; k < 6; k++) Fb[k] += F[k];
      }
    /* subtree wrenches, children into parents (a child's parent is of its tree, or static) */
    for (int a = nb - 1; a >= 0; a--) {
      int b = SAPT(sapw_bodyAt)(P, a), p = m->body_parentid[b];
      if (b > 0 && p > 0)
        for (int k = 0; k < 6; k++) P->body6[6 * p + k] += P->body6[6 * b + k];
    }
    for (int a = 0; a < nd; a++) {
      int j = SAPT(sapw_dofAt)(P, a);
      out[j] = SAPT(sapw_dofImpulse)(P, j);
    }
  }
  SAPT(sapw_rowImpulses)(P, gam, out);
}

/* ---- explicit rows of one contact (Newton matrix, weights, participation) ------------ */

/* the dofs of the chains of contact i's two bodies in P->chain (side 1's chain from its body
 * to the root, then side 0's dofs not on it); returns their number. Two chains of one tree
 * coincide from their first common dof up to the root. */
SAP_HD int SAPT(sapw_contactChain)(const SAPT(sapProblem)* P, int i) {
  const sapModel* m = P->m;
  int n = 0, n1 = 0, t1 = -1;
  for (int s = 1; s >= 0; s--) {
    int b = m->geom_bodyid[P->con_geom[2 * i + s]];
    for (int j = sapw_bodyLastDof(m, b); j >= 0; j = m->dof_parentid[j]) {
      /* side 0 meets side 1's chain (only in side 1's tree): the rest of its root path is
         side 1's, listed already */
      int shared = 0;
      if (s == 0 && m->body_rootid[m->dof_bodyid[j]] == t1)
        for (int k = 0; k < n1 && !shared; k++) shared = P->chain[k] == j;
      if (shared) break;
      P->chain[n++] = j;
    }
    n1 = n;
    if (n > 0) t1 = m->body_rootid[m->dof_bodyid[P->chain[0]]];  // side 1's tree (its root body)
  }
  return n;
}

/* out[r * stride] += sign * (frame row r) . (cdof_j x-motion at x): what unit velocity of dof j
 * adds to the contact-frame velocity of the point x (relative to the tree's reference point) */
SAP_HD void SAPT(sapw_dofPointRows)(const SAPT(sapProblem)* P, int i, int j, const SAP_REAL* x, SAP_REAL sign,
                                    SAP_REAL* out, int stride) {
  const double* f = P->con_frame + 9 * i;
  const double* cd = P->cdof + 6 * j;
  SAP_REAL u[3] = {(SAP_REAL)cd[3] + (SAP_REAL)cd[1] * x[2] - (SAP_REAL)cd[2] * x[1],
                   (SAP_REAL)cd[4] + (SAP_REAL)cd[2] * x[0] - (SAP_REAL)cd[0] * x[2],
                   (SAP_REAL)cd[5] + (SAP_REAL)cd[0] * x[1] - (SAP_REAL)cd[1] * x[0]};
  for (int r = 0; r < 3; r++)
    out[r * stride] += sign * ((SAP_REAL)f[3 * r] * u[0] + (SAP_REAL)f[3 * r + 1] * u[1] + (SAP_REAL)f[3 * r + 2] * u[2]);
  if (P->cd > 3) SAPT(sapw_dofSpinRows)(P, i, j, sign, out, stride);
}

/* column j of rows (cd x nv) = J_i e_j: side 1's term minus side 0's, for the sides whose
 * chain holds j (one writer per column, so lanes can share one contact's columns; the same
 * sums in the same order as sapw_contactRows) */
SAP_HD_COLD void SAPT(sapw_contactRowColumnN)(const SAPT(sapProblem)* P, int i, int j) {
  const sapModel* m = P->m;
  SAP_REAL col[SAP_CDIM_MAX] = {0, 0, 0, 0, 0, 0};
  for (int s = 1; s >= 0; s--) {
    SAP_REAL x[3];
    int b = SAPT(sapw_contactPoint)(P, i, s, x), on = 0;
    for (int k = sapw_bodyLastDof(m, b); k >= 0 && !on; k = m->dof_parentid[k]) on = k == j;
    if (on) SAPT(sapw_dofPointRows)(P, i, j, x, s ? 1 : -1, col, 1);
  }
  for (int r = 0; r < P->cd; r++) P->rows[r * P->nv + j] = col[r];
}
SAP_HD void SAPT(sapw_contactRowColumn)(const SAPT(sapProblem)* P, int i, int j) {
  if (P->cd != 3) {
    SAPT(sapw_contactRowColumnN)(P, i, j);
    return;
  }
  const sapModel* m = P->m;
  SAP_REAL col[3] = {0, 0, 0};
  for (int s = 1; s >= 0; s--) {
    SAP_REAL x[3];
    int b = SAPT(sapw_contactPoint)(P, i, s, x), on = 0;
    for (int k = sapw_bodyLastDof(m, b); k >= 0 && !on; k = m->dof_parentid[k]) on = k == j;
    if (on) SAPT(sapw_dofPointRows)(P, i, j, x, s ? 1 : -1, col, 1);
  }
  for (int r = 0; r < 3; r++) P->rows[r * P->nv + j] = col[r];
}

/* rows (cd x nv) = J_i on the dofs of its chains, listed in P->chain as sapw_contactChain lists
 * them (zero elsewhere); returns their number. One walk per side (the warp solver computes
 * the columns on its lanes instead). The caller clears the listed columns after use
 * (sapw_clearRows). */
SAP_HD int SAPT(sapw_contactRows)(const SAPT(sapProblem)* P, int i) {
  const sapModel* m = P->m;
  for (int s = 1; s >= 0; s--) {
    SAP_REAL x[3];
    int b = SAPT(sapw_contactPoint)(P, i, s, x);
    for (int j = sapw_bodyLastDof(m, b); j >= 0; j = m->dof_parentid[j])
      SAPT(sapw_dofPointRows)(P, i, j, x, s ? 1 : -1, P->rows + j, P->nv);
  }
  return SAPT(sapw_contactChain)(P, i);
}

/* zero column j of rows (after use) */
SAP_HD void SAPT(sapw_clearColumn)(const SAPT(sapProblem)* P, int j) {
  for (int r = 0; r < P->cd; r++) P->rows[r * P->nv + j] = 0;
}

SAP_HD void SAPT(sapw_clearRows)(const SAPT(sapProblem)* P, int n) {
  for (int k = 0; k < n; k++) SAPT(sapw_clearColumn)(P, P->chain[k]);
}

/* contact i's chain dofs and rows from the cache (made here at the first use in this solve:
 * sapw_contactRows, copied compact, rows cleared): *dofs = its chain in sapw_contactChain's
 * order, *J = row r at (*J)[r jmax + p] for dof (*dofs)[p]; the same values as P->rows, so
 * sums over them are bit for bit those over the rows. Returns the chain length. */
SAP_HD int SAPT(sapw_contactRowsCached)(const SAPT(sapProblem)* P, int i, const int** dofs, const SAP_REAL** J) {
  int jm = P->jmax, cd = P->cd, *jd = P->jdof + (long)jm * i;
  SAP_REAL* Ji = P->jrow + (long)jm * cd * i;
  int n = P->jn[i];
  if (n < 0) {
    n = SAPT(sapw_contactRows)(P, i);
    for (int p = 0; p < n; p++) {
      int j = P->chain[p];
      jd[p] = j;
      for (int r = 0; r < cd; r++) Ji[r * jm + p] = P->rows[r * P->nv + j];
    }
    SAPT(sapw_clearRows)(P, n);
    P->jn[i] = n;
  }
  *dofs = jd;
  *J = Ji;
  return n;
}

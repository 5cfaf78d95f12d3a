/* Islands of one world's SAP problem (template body in the contact objective precision;
 * include via sap_solve.h). The Newton matrix H = A + J'GJ + S'G_s S couples two dofs only
 * through A's blocks and through constraints: A = M + diag(armature) + h diag(damping) is
 * nonzero only between a dof and its ancestors (kernels/dynamics_t.h, sapw_crbColumn), so each
 * dof tree (the dofs below one dof without a parent dof) is one diagonal block, contiguous in
 * MuJoCo's depth-first dof order; a contact couples the chains of its two bodies, a scalar row
 * (drive, limit, friction, equality) its listed dofs. The islands are the connected components
 * of the dof trees under those links (union-find), as the contact-graph split of ADONIS
 * (seed 004) and MuJoCo's island discovery. H is block diagonal over them: each island's block
 * is filled, factored and solved on its own (sapw_direction), which gives the Newton step of
 * the whole H in exact arithmetic at sum n_k^3 / 3 instead of nv^3 / 3. Dofs whose tree no
 * constraint reaches and that do not take part (sapw_participation) are in no island: their
 * gradient is zero (v = v* there) and so is their step. */

/* the union-find root of x, halving the path on the way */
SAP_HD int SAPT(sapw_ufFind)(int* uf, int x) {
  while (uf[x] != x) {
    uf[x] = uf[uf[x]];
    x = uf[x];
  }
  return x;
}

SAP_HD void SAPT(sapw_ufUnion)(int* uf, int a, int b) {
  a = SAPT(sapw_ufFind)(uf, a);
  b = SAPT(sapw_ufFind)(uf, b);
  if (a < b) uf[b] = a;
  else if (b < a) uf[a] = b;
}

/* tree ranges: tlo[j] = the first dof of dof j's tree (the ancestor without a parent dof),
 * thi[j] one past its last. Returns 0 when a tree's dofs are not contiguous (not MuJoCo's
 * order; then every range is [0, nv), one block). */
SAP_HD int SAPT(sapw_treeRanges)(const sapModel* m, int nv, int* tlo, int* thi) {
  int ok = 1;
  for (int j = 0; j < nv; j++) {
    int p = m->dof_parentid[j];
    tlo[j] = p < 0 ? j : tlo[p];
    if (p >= 0 && tlo[j] != tlo[j - 1]) ok = 0;  // a tree's dofs must follow one another
  }
  for (int j = nv - 1; j >= 0; j--) thi[j] = j + 1 < nv && tlo[j + 1] == tlo[j] ? thi[j + 1] : j + 1;
  if (!ok)
    for (int j = 0; j < nv; j++) tlo[j] = 0, thi[j] = nv;
  return ok;
}

/* the block offsets hoff from the island sizes in ibeg */
SAP_HD void SAPT(sapw_islandOffsets)(SAPT(sapProblem)* P) {
  P->hoff[0] = 0;
  for (int k = 0; k < P->nisl; k++) {
    long n = P->ibeg[k + 1] - P->ibeg[k];
    P->hoff[k + 1] = P->hoff[k] + n * n;
  }
}

/* one island of all nv dofs in order, every tree range [0, nv): the dense problem (problems
 * without a model's tree structure, the tests' synthetic ones) */
SAP_HD void SAPT(sapw_islandsOne)(SAPT(sapProblem)* P) {
  int nv = P->nv;
  for (int j = 0; j < nv; j++) {
    P->isl[j] = 0;
    P->iloc[j] = P->idof[j] = j;
    P->tlo[j] = 0;
    P->thi[j] = nv;
  }
  P->nisl = 1;
  P->ibeg[0] = 0;
  P->ibeg[1] = nv;
  SAPT(sapw_islandOffsets)(P);
}

/* split the assembled problem (contacts, scalar rows, participation done) into islands */
SAP_HD void SAPT(sapw_islands)(const sapModel* m, SAPT(sapProblem)* P) {
  int nv = P->nv;
  int *uf = P->iloc, *mark = P->idof;  // scratch until the island lists are written
  SAPT(sapw_treeRanges)(m, nv, P->tlo, P->thi);
  for (int j = 0; j < nv; j++) uf[j] = j, mark[j] = 0;
  // links: a contact's two trees, a scalar row's trees; a participating dof's tree is in
  for (int i = 0; i < P->nc; i++) {
    int d0 = sapw_bodyLastDof(m, m->geom_bodyid[P->con_geom[2 * i]]);
    int d1 = sapw_bodyLastDof(m, m->geom_bodyid[P->con_geom[2 * i + 1]]);
    if (d0 >= 0) mark[P->tlo[d0]] = 1;
    if (d1 >= 0) mark[P->tlo[d1]] = 1;
    if (d0 >= 0 && d1 >= 0) SAPT(sapw_ufUnion)(uf, P->tlo[d0], P->tlo[d1]);
  }
  for (int s = 0; s < P->ns; s++) {
    const int* idx = P->sidx + (long)s * P->snz;
    for (int k = 0; k < P->snz && idx[k] >= 0; k++) {
      mark[P->tlo[idx[k]]] = 1;
      SAPT(sapw_ufUnion)(uf, P->tlo[idx[0]], P->tlo[idx[k]]);
    }
  }
  for (int j = 0; j < nv; j++)
    if (P->dscale[j] != 0) mark[P->tlo[j]] = 1;
  // island ids in the order of their first dof (uf's roots are the smallest tree start)
  int nisl = 0;
  for (int j = 0; j < nv; j++) P->isl[j] = mark[P->tlo[j]] ? SAPT(sapw_ufFind)(uf, P->tlo[j]) : -1;
  for (int j = 0; j < nv; j++) mark[j] = -1;  // root dof -> island id
  for (int j = 0; j < nv; j++) {
    int r = P->isl[j];
    if (r < 0) continue;
    if (mark[r] < 0) mark[r] = nisl++;
    P->isl[j] = mark[r];
  }
  // dof lists by counting sort (ascending dofs within an island); hoff as the cursors
  for (int k = 0; k <= nisl; k++) P->ibeg[k] = 0;
  for (int j = 0; j < nv; j++)
    if (P->isl[j] >= 0) P->ibeg[P->isl[j] + 1]++;
  for (int k = 0; k < nisl; k++) P->ibeg[k + 1] += P->ibeg[k];
  for (int k = 0; k < nisl; k++) P->hoff[k] = P->ibeg[k];
  for (int j = 0; j < nv; j++) {
    int k = P->isl[j];
    if (k < 0) {
      P->iloc[j] = -1;
      continue;
    }
    int pos = (int)P->hoff[k]++;
    P->idof[pos] = j;
    P->iloc[j] = pos - P->ibeg[k];
  }
  P->nisl = nisl;
  SAPT(sapw_islandOffsets)(P);
}

/* row of dof i in its island's block of H (index it with iloc[j], j in the same island) */
SAP_HD SAP_REAL* SAPT(sapw_hRow)(const SAPT(sapProblem)* P, int i) {
  int k = P->isl[i];
  return P->H + P->hoff[k] + (long)P->iloc[i] * (P->ibeg[k + 1] - P->ibeg[k]);
}

/* H's entry (i, j) of two dofs of one island, i >= j (lower triangle of the island's block);
 * the dense nv x nv layout while the problem has no islands (the warp solve) */
SAP_HD SAP_REAL* SAPT(sapw_hAt)(const SAPT(sapProblem)* P, int i, int j) {
  if (!P->nisl) return P->H + (long)i * P->nv + j;
  return SAPT(sapw_hRow)(P, i) + P->iloc[j];
}

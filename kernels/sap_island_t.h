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

/* A's row i indexed by column, over i's tree range [tlo, thi) (P->Aadr: A stored by the
 * model's tree blocks, kernels.h sapw_Arow, which are these ranges) */
SAP_HD const double* SAPT(sapw_Atree)(const SAPT(sapProblem)* P, const double* A, int i) {
  return A + P->Aadr[i];
}

/* tree ranges: tlo[j] = the first dof of dof j's tree (the ancestor without a parent dof),
 * thi[j] one past its last. Returns 0 when a tree's dofs are not contiguous (not MuJoCo's
 * order; then every range is [0, nv), one block). A model with A's layout has them already
 * (dof_Alo, dof_Ahi, computed at load by this rule, host/model_load.c dof_Alayout): copied,
 * so that A's stored blocks are these ranges (the return value is then 1). */
SAP_HD int SAPT(sapw_treeRanges)(const sapModel* m, int nv, int* tlo, int* thi) {
  if (m->dof_Aadr) {
    for (int j = 0; j < nv; j++) tlo[j] = m->dof_Alo[j], thi[j] = m->dof_Ahi[j];
    return 1;
  }
  return sapw_dofTreeRanges(m->dof_parentid, nv, tlo, thi);
}

/* 1 if every row of A over island k's dofs (pre-order, iend set) is exactly zero after its
 * dof's subtree up to its tree's end (no fixed tendon's armature links two branches there):
 * then A x skips those entries bit for bit (sapw_treeDot) */
SAP_HD int SAPT(sapw_subtreeRows)(const SAPT(sapProblem)* P, int k) {
  int o = P->ibeg[k], n = P->ibeg[k + 1] - o;
  for (int a = 0; a < n; a++) {
    int i = P->idof[o + a];
    const double* Ai = SAPT(sapw_Atree)(P, P->A, i);
    for (int j = i + P->iend[o + a] - a + 1; j < P->thi[i]; j++)
      if (Ai[j] != 0) return 0;
  }
  return 1;
}

/* the storage of every island (hoff, in entries), from its size and, for an island of several
 * trees factored block-sparse (ntr[k] > 0, sapw_islandTrees done), from its pattern: a dense
 * island n_k^2 entries; a block-sparse one, per tree t its diagonal block (n_t^2, at tbo) and
 * then its column of L, the blocks n_u x n_t of the trees u in its pattern row (fill
 * included): sum n_t^2 + sum n_u n_t, nblk blocks in all, each row word's first block number
 * in trk (ntrk words: up to the last block-sparse island's pattern) and each block's place in
 * bofs. With hl_grow (H and L outside the carve) H and L of exactly those entries: H (when
 * the linear solve has another precision), then L's entries, its nv right-hand sides at
 * lrhs = hoff[nisl], then bofs and trk, then the contacts' Jacobian row cache (nc contacts of
 * at most SAP_SOLVE_NCHAIN chain dofs: jn, jdof, jrow; none, jmax 0, without hl_grow). In the
 * carve (nv^2 entries of L before the right-hand sides; trk carved, T W words) bofs follows the islands' entries (an int in an entry's
 * room): a block-sparse island's entries plus its blocks are at most n_k^2, as a pair of
 * trees has 2 n_u n_t places in the dense n_k x n_k array and takes n_u n_t entries and one
 * place of bofs here */
SAP_HD void SAPT(sapw_islandOffsets)(SAPT(sapProblem)* P) {
  long nblk = 0, ntrk = 0;
  P->hoff[0] = 0;
  for (int k = 0; k < P->nisl; k++) {
    int o = P->ibeg[k], n = P->ibeg[k + 1] - o, T = P->ntr[k], W = (T + 31) / 32;
    long size = T > 0 ? 0 : (long)n * n;
    for (int v = 0; v < T; v++) {
      long nb = SAPT(sapb_size)(P->tst + o, T, n, v);
      const unsigned* pv = P->tpat + P->poff[k] + (long)v * W;
      P->tbo[o + v] = (int)size;
      size += nb * nb;
      for (int w = 0; w < W; w++)
        for (unsigned bits = pv[w]; bits; bits &= bits - 1, nblk++)
          size += nb * SAPT(sapb_size)(P->tst + o, T, n, 32 * w + sapb_ctz(bits));
    }
    if (T > 0) ntrk = P->poff[k + 1];
    P->hoff[k + 1] = P->hoff[k] + size;
  }
  P->nblk = nblk;
  long R = sizeof(SAP_REAL), lb = P->lin_bytes, nh = P->hoff[P->nisl];
  if (P->hl_grow) {
    long hbytes = lb == R ? 0 : (R * nh + 7) / 8 * 8;
    long lbytes = (lb * (nh + P->nv) + 7) / 8 * 8, bbytes = (4 * (nblk + ntrk) + 7) / 8 * 8;
    // no cache for a problem without a model (the tests' synthetic ones)
    long jm = P->m ? SAP_SOLVE_NCHAIN(P->m) : 0, nc = jm ? P->nc : 0, ibytes = (4 * nc * (1 + jm) + 7) / 8 * 8;
    unsigned char* buf = (unsigned char*)P->hl_grow(P->hl_ctx, hbytes + lbytes + bbytes + ibytes + R * nc * P->cd * jm);
    P->hl_fail = buf == (unsigned char*)0;
    P->L = buf ? (void*)(buf + hbytes) : (void*)0;
    P->H = lb == R ? (SAP_REAL*)P->L : (SAP_REAL*)buf;
    P->lrhs = nh;
    P->bofs = buf ? (int*)(buf + hbytes + lbytes) : (int*)0;
    P->trk = buf ? P->bofs + nblk : (int*)0;
    P->jmax = buf ? (int)jm : 0;
    if (buf) {
      unsigned char* jc = buf + hbytes + lbytes + bbytes;
      P->jn = (int*)jc;
      P->jdof = P->jn + nc;
      P->jrow = (SAP_REAL*)(jc + ibytes);
      for (long i = 0; i < nc; i++) P->jn[i] = -1;  // made at first use
    }
  } else
    P->bofs = P->L ? (int*)((unsigned char*)P->L + lb * nh) : (int*)0;
  if (!P->bofs) return;
  // each row word's first block, each block's place: its tree's column, after the tree's
  // diagonal block, ascending
  long b = 0;
  for (int k = 0; k < P->nisl; k++) {
    int o = P->ibeg[k], n = P->ibeg[k + 1] - o, T = P->ntr[k], W = (T + 31) / 32;
    for (int v = 0; v < T; v++) {
      int nb = SAPT(sapb_size)(P->tst + o, T, n, v), at = P->tbo[o + v] + nb * nb;
      const unsigned* pv = P->tpat + P->poff[k] + (long)v * W;
      for (int w = 0; w < W; w++) {
        P->trk[P->poff[k] + (long)v * W + w] = (int)b;
        for (unsigned bits = pv[w]; bits; bits &= bits - 1) {
          P->bofs[b++] = at;
          at += nb * SAPT(sapb_size)(P->tst + o, T, n, 32 * w + sapb_ctz(bits));
        }
      }
    }
  }
}

/* one island of all nv dofs in order, every tree range [0, nv): the dense problem (problems
 * without a model's tree structure, the tests' synthetic ones); a model with A stored by tree
 * blocks keeps its trees' ranges (A's rows hold no more; the entries between trees are zeros) */
SAP_HD void SAPT(sapw_islandsOne)(SAPT(sapProblem)* P) {
  int nv = P->nv;
  for (int j = 0; j < nv; j++) {
    P->isl[j] = 0;
    P->iloc[j] = P->idof[j] = j;
    P->ipar[j] = -1;  // no dof tree known: the dense factorization
    P->iseg[j] = j;
    P->tlo[j] = sapw_Alo(P->m, j);
    P->thi[j] = sapw_Ahi(P->m, nv, j);
  }
  P->nisl = 1;
  P->ibeg[0] = 0;
  P->ibeg[1] = nv;
  P->ntr[0] = P->ntr[1] = 0;  // one dense block
  P->itree[0] = 0;
  SAPT(sapw_islandOffsets)(P);
}

/* ---- tree-level symbolic factorization of one island (block-sparse Cholesky) ---------- */
/* Inside an island, H's block (u, v) of two dof trees is nonzero only where a contact or a
 * scalar row links u and v (A is zero between trees), so H is block-sparse at the tree level.
 * sapw_treeOrder runs the elimination game on that tree graph (Rose 1972; George & Liu 1981,
 * ch. 5): it picks an order (minimum degree: the tree with the fewest uneliminated
 * neighbours, the smallest index on ties, so exact and deterministic; or the natural order)
 * and turns the graph into the symbolic factor: after tree v is eliminated its row holds the
 * trees u eliminated later with L_uv != 0, fill included (v's neighbours become a clique).
 * adj: T rows of W words of bits, symmetric, no self bits on entry; alive: W words scratch.
 * Returns the factorization's multiply-adds: per tree v with S = sum n_u, Q = sum n_u^2 over
 * its row, n_v^3 / 3 (diagonal) + n_v^2 S (panel) + n_v (S^2 + Q) / 2 (update); the dense
 * factorization's is n^3 / 3. */
SAP_HD double SAPT(sapw_treeOrder)(int T, int n, const int* st, unsigned* adj, unsigned* alive, int W,
                                   int natural, int* ord, int* pos) {
  double flops = 0;
  for (int w = 0; w < W; w++) alive[w] = 0;
  for (int t = 0; t < T; t++) alive[t / 32] |= 1u << (t % 32);
  for (int step = 0; step < T; step++) {
    int v = -1;
    if (natural) v = step;
    else {
      int best = T + 1;
      for (int u = 0; u < T; u++) {
        if (!(alive[u / 32] >> (u % 32) & 1)) continue;
        int d = 0;
        for (int w = 0; w < W; w++) d += sapb_popc(adj[(long)u * W + w] & alive[w]);
        if (d < best) best = d, v = u;
      }
    }
    alive[v / 32] &= ~(1u << (v % 32));
    unsigned* rv = adj + (long)v * W;
    for (int w = 0; w < W; w++) rv[w] &= alive[w];  // v's row of the factor
    ord[step] = v;
    pos[v] = step;
    double nb = SAPT(sapb_size)(st, T, n, v), S = 0, Q = 0;
    for (int w = 0; w < W; w++)
      for (unsigned bits = rv[w]; bits; bits &= bits - 1) {
        int u = 32 * w + sapb_ctz(bits);
        unsigned* ru = adj + (long)u * W;
        for (int x = 0; x < W; x++) ru[x] |= rv[x];  // the neighbours become a clique
        ru[u / 32] &= ~(1u << (u % 32));
        double nu = SAPT(sapb_size)(st, T, n, u);
        S += nu;
        Q += nu * nu;
      }
    flops += nb * nb * nb / 3 + nb * nb * S + nb * (S * S + Q) / 2;
  }
  return flops;
}

/* link trees a and b of island k in its tree graph */
SAP_HD void SAPT(sapw_treeLink)(SAPT(sapProblem)* P, int a, int b) {
  int k = P->isl[a];
  if (k < 0 || P->isl[b] != k) return;
  int ta = P->tix[a], tb = P->tix[b];
  if (ta == tb) return;
  int W = (P->ntr[k] + 31) / 32;
  unsigned* pat = P->tpat + P->poff[k];
  pat[(long)ta * W + tb / 32] |= 1u << (tb % 32);
  pat[(long)tb * W + ta / 32] |= 1u << (ta % 32);
}

/* the trees of every island, their graph (contacts and scalar rows), and the order and
 * symbolic factor of each island of several trees (sapw_treeOrder). An island factors
 * block-sparse (ntr[k] = its trees) when P->sparse is 2 or 3, or when it is 1 and the
 * estimate is below 3/4 of the dense factorization's (the block loops' overhead on small
 * blocks); else ntr[k] = 0 and it keeps the dense path (one tree: always) */
SAP_HD void SAPT(sapw_islandTrees)(const sapModel* m, SAPT(sapProblem)* P) {
  int nisl = P->nisl;
  for (int k = 0; k <= nisl; k++) P->ntr[k] = 0;
  if (!P->sparse) return;
  P->poff[0] = 0;
  for (int k = 0; k < nisl; k++) {
    int T = 0;
    for (int q = P->ibeg[k]; q < P->ibeg[k + 1]; q++) {
      int j = P->idof[q];
      if (P->tlo[j] == j) P->tst[P->ibeg[k] + T++] = q - P->ibeg[k];
      P->tix[j] = T - 1;
    }
    P->ntr[k] = T;
    P->poff[k + 1] = P->poff[k] + (long)T * ((T + 31) / 32);
  }
  for (long x = 0; x < P->poff[nisl]; x++) P->tpat[x] = 0;
  for (int i = 0; i < P->nc; i++) {
    int d0 = sapw_bodyLastDof(m, m->geom_bodyid[P->con_geom[2 * i]]);
    int d1 = sapw_bodyLastDof(m, m->geom_bodyid[P->con_geom[2 * i + 1]]);
    if (d0 >= 0 && d1 >= 0) SAPT(sapw_treeLink)(P, d0, d1);
  }
  for (int s = 0; s < P->ns; s++) {
    const int* idx = P->sidx + (long)s * P->snz;
    for (int a = 0; a < P->snz && idx[a] >= 0; a++)
      for (int b = 0; b < a; b++) SAPT(sapw_treeLink)(P, idx[a], idx[b]);
  }
  for (int k = 0; k < nisl; k++) {
    int T = P->ntr[k], n = P->ibeg[k + 1] - P->ibeg[k], o = P->ibeg[k];
    if (T < 2) {
      P->ntr[k] = 0;
      continue;
    }
    double f = SAPT(sapw_treeOrder)(T, n, P->tst + o, P->tpat + P->poff[k], P->tpat + P->poff[nisl],
                                    (T + 31) / 32, P->sparse == 3, P->tord + o, P->tpos + o);
    double fd = (double)n * n * n / 3;
    if (P->sparse == 1 && !(4 * f < 3 * fd)) P->ntr[k] = 0;
  }
}

/* island k of contact i (scalar row s): the island of its first side with dofs (of its
 * first dof); 0 when it has none (a contact of two static geoms, a row without dofs: a constant
 * cost, evaluated with island 0 so its impulse is written) */
SAP_HD int SAPT(sapw_conIsland)(const sapModel* m, const SAPT(sapProblem)* P, int i) {
  int d = sapw_bodyLastDof(m, m->geom_bodyid[P->con_geom[2 * i]]);
  if (d < 0) d = sapw_bodyLastDof(m, m->geom_bodyid[P->con_geom[2 * i + 1]]);
  int k = d >= 0 ? P->isl[d] : -1;
  return k >= 0 ? k : 0;
}
SAP_HD int SAPT(sapw_rowIsland)(const SAPT(sapProblem)* P, int s) {
  int j = P->sidx[(long)s * P->snz], k = j >= 0 ? P->isl[j] : -1;
  return k >= 0 ? k : 0;
}

/* the island views (sapProblem.vk): each island's contacts, scalar rows and bodies, ascending
 * (counting sorts; each count array ends as the next island's start and is shifted back), and
 * the static bodies every view visits. After sapw_islands, when the islands run their own
 * loops (sapw_newtonIslands) */
SAP_HD void SAPT(sapw_islandViews)(const sapModel* m, SAPT(sapProblem)* P) {
  int nisl = P->nisl;
  for (int k = 0; k <= nisl; k++) P->cbeg[k] = 0;
  for (int i = 0; i < P->nc; i++) P->cbeg[SAPT(sapw_conIsland)(m, P, i) + 1]++;
  for (int k = 0; k < nisl; k++) P->cbeg[k + 1] += P->cbeg[k];
  for (int i = 0; i < P->nc; i++) P->icon[P->cbeg[SAPT(sapw_conIsland)(m, P, i)]++] = i;
  for (int k = nisl; k > 0; k--) P->cbeg[k] = P->cbeg[k - 1];
  P->cbeg[0] = 0;
  for (int k = 0; k <= nisl; k++) P->rbeg[k] = 0;
  for (int s = 0; s < P->ns; s++) P->rbeg[SAPT(sapw_rowIsland)(P, s) + 1]++;
  for (int k = 0; k < nisl; k++) P->rbeg[k + 1] += P->rbeg[k];
  for (int s = 0; s < P->ns; s++) P->irow[P->rbeg[SAPT(sapw_rowIsland)(P, s)]++] = s;
  for (int k = nisl; k > 0; k--) P->rbeg[k] = P->rbeg[k - 1];
  P->rbeg[0] = 0;
  /* bodies: static (no dof on the chain to the world) or of the island of their chain's dof;
   * bodies of trees in no island are in no view */
  P->nsbody = 0;
  for (int k = 0; k <= nisl; k++) P->bbeg[k] = 0;
  for (int b = 0; b < m->nbody; b++) {
    int j = sapw_bodyLastDof(m, b);
    if (j < 0) P->sbody[P->nsbody++] = b;
    else if (P->isl[j] >= 0) P->bbeg[P->isl[j] + 1]++;
  }
  for (int k = 0; k < nisl; k++) P->bbeg[k + 1] += P->bbeg[k];
  for (int b = 0; b < m->nbody; b++) {
    int j = sapw_bodyLastDof(m, b);
    if (j >= 0 && P->isl[j] >= 0) P->ibody[P->bbeg[P->isl[j]]++] = b;
  }
  for (int k = nisl; k > 0; k--) P->bbeg[k] = P->bbeg[k - 1];
  P->bbeg[0] = 0;
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
  /* the dof forest in each island's local order, and whether factoring by it pays: the tree
   * factorization takes sum depth^2 / 2 multiply-adds against the dense n^3 / 6, with about
   * 1.5 times the dense one's cost per operation (its loops follow parent links) */
  for (int k = 0; k < nisl; k++) {
    int o = P->ibeg[k], n = P->ibeg[k + 1] - o;
    long ops = 0;
    for (int a = 0; a < n; a++) {
      int p = m->dof_parentid[P->idof[o + a]];
      P->ipar[o + a] = p >= 0 ? P->iloc[p] : -1;
      long depth = 1;
      for (int q = P->ipar[o + a]; q >= 0; q = P->ipar[o + q]) depth++;
      ops += depth * depth;
    }
    SAPT(sapw_treeSegments)(P->ipar + o, 0, n, P->iseg + o);
    P->itree[k] = 9 * ops < 2 * (long)n * n * n;
    if (SAPT(sapw_treePreorder)(P->ipar + o, 0, n)) {  // MuJoCo's order: the subtrees are runs
      SAPT(sapw_treeEnds)(P->ipar + o, 0, n, P->iend + o);
      P->itree[k] |= 2 | 4 * SAPT(sapw_subtreeRows)(P, k);
    }
  }
  P->nisl = nisl;
  SAPT(sapw_islandTrees)(m, P);
  SAPT(sapw_islandOffsets)(P);  // the storage by the patterns
}

/* row of dof i in its island's dense block of H (ntr[k] = 0; index it with iloc[j], j in the
 * same island) */
SAP_HD SAP_REAL* SAPT(sapw_hRow)(const SAPT(sapProblem)* P, int i) {
  int k = P->isl[i];
  return P->H + P->hoff[k] + (long)P->iloc[i] * (P->ibeg[k + 1] - P->ibeg[k]);
}

/* H's row i over the columns of dof j's tree, j in i's island: H(i, j') = p[(iloc[j'] - *c0) *
 * *s] for every j' of that tree. Dense island: the row (every j' of the island, c0 = 0, s = 1).
 * Block-sparse (ntr[k] > 0), trees u of i and t of j: the diagonal block's row when t = u
 * (s = 1); else the block of the pair in the column of the tree eliminated first, L's
 * orientation (sap_block_t.h): L_ut (rows u, s = 1) when t goes first, else L_tu (rows t,
 * s = n_u), so that the factor finds H's entries where it factors them */
SAP_HD SAP_REAL* SAPT(sapw_hRowTree)(const SAPT(sapProblem)* P, int i, int j, int* c0, int* s) {
  int k = P->isl[i], T = P->ntr[k];
  if (!T) {
    *c0 = 0;
    *s = 1;
    return SAPT(sapw_hRow)(P, i);
  }
  int o = P->ibeg[k], n = P->ibeg[k + 1] - o, W = (T + 31) / 32, u = P->tix[i], t = P->tix[j];
  const int* st = P->tst + o;
  int a = P->iloc[i] - st[u], nu = SAPT(sapb_size)(st, T, n, u);
  SAP_REAL* Hk = P->H + P->hoff[k];
  *c0 = st[t];
  if (t == u) {
    *s = 1;
    return Hk + P->tbo[o + u] + (long)a * nu;
  }
  const unsigned* pat = P->tpat + P->poff[k];
  const int* rk = P->trk + P->poff[k];
  if (P->tpos[o + t] < P->tpos[o + u]) {  // L_ut in t's column: row a
    *s = 1;
    return Hk + sapb_blockAt(pat, rk, P->bofs, W, t, u) + (long)a * SAPT(sapb_size)(st, T, n, t);
  }
  *s = nu;  // L_tu in u's column: column a
  return Hk + sapb_blockAt(pat, rk, P->bofs, W, u, t) + a;
}

/* H's entry (i, j) of two dofs of one island, i >= j (lower triangle of the island's dense
 * block, or its place among the trees' blocks: sapw_hRowTree); the dense nv x nv layout while
 * the problem has no islands (the warp solve) */
SAP_HD SAP_REAL* SAPT(sapw_hAt)(const SAPT(sapProblem)* P, int i, int j) {
  if (!P->nisl) return P->H + (long)i * P->nv + j;
  int c0, s;
  SAP_REAL* p = SAPT(sapw_hRowTree)(P, i, j, &c0, &s);
  return p + (long)(P->iloc[j] - c0) * s;
}

/* island k's view (sapw_islandViews done): the dof list is its slice of idof, the body list
 * the static bodies then its trees' bodies (parents still come before children) */
SAP_HD void SAPT(sapw_setView)(SAPT(sapProblem)* P, int k) {
  P->vk = k;
  P->nadof = P->ibeg[k + 1] - P->ibeg[k];
  P->adof = P->idof + P->ibeg[k];
  int n = 0;
  for (int a = 0; a < P->nsbody; a++) P->vbody[n++] = P->sbody[a];
  for (int q = P->bbeg[k]; q < P->bbeg[k + 1]; q++) P->vbody[n++] = P->ibody[q];
  P->nabody = n;
  P->abody = P->vbody;
}

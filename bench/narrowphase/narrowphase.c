/* Narrow-phase cost per call (sapc_collide, fp64 and fp32) for five convex pairs at 0.1-0.2 m,
 * 2000 random orientations, 5 mm past first touch, 10 mm margin; docs/collision_oracle.md.
 * Not part of the CLI (which compiles the files directly in bench/); build: cc -std=c11 -D_DEFAULT_SOURCE -O2 -Iinclude -Ikernels -Ihost bench/narrowphase/narrowphase.c -lm -o build/narrowphase */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <math.h>
#include <time.h>
#include "sapsim/sapsim.h"
#include "collision.h"
static const double MESHV[14][3] = {{0.15,0,0},{-0.15,0,0},{0,0.12,0},{0,-0.12,0},{0,0,0.1},{0,0,-0.1},{0.07,0.06,0.05},{0.07,0.06,-0.05},{0.07,-0.06,0.05},{0.07,-0.06,-0.05},{-0.07,0.06,0.05},{-0.07,0.06,-0.05},{-0.07,-0.06,0.05},{-0.07,-0.06,-0.05}};
static double urand(void) { return rand() / (double)RAND_MAX * 2 - 1; }
static void rot(double* m) { double q[4], n = 0; for (int k = 0; k < 4; k++) { q[k] = urand(); n += q[k]*q[k]; } n = sqrt(n); for (int k = 0; k < 4; k++) q[k] /= n;
  double w=q[0],x=q[1],y=q[2],z=q[3];
  double r[9]={1-2*(y*y+z*z),2*(x*y-w*z),2*(x*z+w*y),2*(x*y+w*z),1-2*(x*x+z*z),2*(y*z-w*x),2*(x*z-w*y),2*(y*z+w*x),1-2*(x*x+y*y)}; memcpy(m,r,sizeof(r)); }
static void geom(sapcGeom_f64* g, int t) {
  memset(g, 0, sizeof(*g)); g->type = t; rot(g->mat);
  if (t == SAP_GEOM_ELLIPSOID) { g->size[0]=0.15; g->size[1]=0.1; g->size[2]=0.07; }
  if (t == SAP_GEOM_CYLINDER) { g->size[0]=0.1; g->size[1]=0.12; }
  if (t == SAP_GEOM_CAPSULE) { g->size[0]=0.06; g->size[1]=0.15; }
  if (t == SAP_GEOM_BOX) { g->size[0]=0.15; g->size[1]=0.1; g->size[2]=0.07; }
  if (t == SAP_GEOM_MESH) { g->vert = &MESHV[0][0]; g->nvert = 14; }
}
int main(void) {
  int pairs[5][2] = {{SAP_GEOM_ELLIPSOID,SAP_GEOM_ELLIPSOID},{SAP_GEOM_CAPSULE,SAP_GEOM_CYLINDER},{SAP_GEOM_CYLINDER,SAP_GEOM_BOX},{SAP_GEOM_BOX,SAP_GEOM_MESH},{SAP_GEOM_MESH,SAP_GEOM_MESH}};
  const char* nm[5] = {"ellipsoid-ellipsoid","capsule-cylinder","cylinder-box","box-mesh","mesh-mesh"};
  for (int p = 0; p < 5; p++) {
    enum { N = 2000 };
    static sapcGeom_f64 A[N], B[N];
    srand(1);
    for (int i = 0; i < N; i++) {
      geom(&A[i], pairs[p][0]); geom(&B[i], pairs[p][1]);
      double u[3] = {urand(), urand(), urand()}, n = sqrt(u[0]*u[0]+u[1]*u[1]+u[2]*u[2]);
      // bisect the touching offset along u with sapsim itself (margin 0)
      double lo = 0, hi = 1; sapcContact_f64 c[SAPC_PAIRCON];
      for (int it = 0; it < 40; it++) { double mid = 0.5*(lo+hi); for (int k=0;k<3;k++) B[i].pos[k]=mid*u[k]/n; if (sapc_collide_f64(&A[i],&B[i],0,c)>0) lo=mid; else hi=mid; }
      for (int k = 0; k < 3; k++) B[i].pos[k] = (hi - 0.005) * u[k] / n;
    }
    for (int f = 0; f < 2; f++) {
      struct timespec t0, t1; sapcContact_f64 c[SAPC_PAIRCON]; sapcContact_f32 c32[SAPC_PAIRCON]; int tot = 0;
      static sapcGeom_f32 A32[N], B32[N];
      for (int i = 0; i < N; i++) { A32[i].type=A[i].type; B32[i].type=B[i].type; A32[i].vert=A[i].vert; B32[i].vert=B[i].vert; A32[i].nvert=A[i].nvert; B32[i].nvert=B[i].nvert;
        for (int k=0;k<3;k++){A32[i].pos[k]=A[i].pos[k];B32[i].pos[k]=B[i].pos[k];A32[i].size[k]=A[i].size[k];B32[i].size[k]=B[i].size[k];}
        for (int k=0;k<9;k++){A32[i].mat[k]=A[i].mat[k];B32[i].mat[k]=B[i].mat[k];} }
      clock_gettime(CLOCK_MONOTONIC, &t0);
      for (int r = 0; r < 5; r++) for (int i = 0; i < N; i++) tot += f ? sapc_collide_f32(&A32[i], &B32[i], 0.01f, c32) : sapc_collide_f64(&A[i], &B[i], 0.01, c);
      clock_gettime(CLOCK_MONOTONIC, &t1);
      printf("%-20s %s %7.2f us/call (%d contacts)\n", nm[p], f ? "fp32" : "fp64", ((t1.tv_sec-t0.tv_sec)*1e9+(t1.tv_nsec-t0.tv_nsec))/1e3/(5.0*N), tot);
    }
  }
  return 0;
}

/* Small vector, rotation and spatial-algebra helpers (template body: include
 * with SAP_REAL and SAP_SUFFIX set; see sap_real.h). Matrices are 3x3 row-major,
 * quaternions w-x-y-z, spatial vectors [angular; linear] (MuJoCo convention). */
#define sreal SAP_REAL

SAP_HD void SAPT(sapu_copy3)(sreal* r, const sreal* a) { r[0] = a[0]; r[1] = a[1]; r[2] = a[2]; }
SAP_HD sreal SAPT(sapu_dot3)(const sreal* a, const sreal* b) { return a[0] * b[0] + a[1] * b[1] + a[2] * b[2]; }

SAP_HD void SAPT(sapu_cross3)(sreal* r, const sreal* a, const sreal* b) {
  sreal x = a[1] * b[2] - a[2] * b[1], y = a[2] * b[0] - a[0] * b[2], z = a[0] * b[1] - a[1] * b[0];
  r[0] = x; r[1] = y; r[2] = z;
}

/* r = M a */
SAP_HD void SAPT(sapu_mulMatVec3)(sreal* r, const sreal* M, const sreal* a) {
  sreal x = M[0] * a[0] + M[1] * a[1] + M[2] * a[2];
  sreal y = M[3] * a[0] + M[4] * a[1] + M[5] * a[2];
  sreal z = M[6] * a[0] + M[7] * a[1] + M[8] * a[2];
  r[0] = x; r[1] = y; r[2] = z;
}

/* r = M' a */
SAP_HD void SAPT(sapu_mulMatTVec3)(sreal* r, const sreal* M, const sreal* a) {
  sreal x = M[0] * a[0] + M[3] * a[1] + M[6] * a[2];
  sreal y = M[1] * a[0] + M[4] * a[1] + M[7] * a[2];
  sreal z = M[2] * a[0] + M[5] * a[1] + M[8] * a[2];
  r[0] = x; r[1] = y; r[2] = z;
}

/* R = A B */
SAP_HD void SAPT(sapu_mulMatMat3)(sreal* R, const sreal* A, const sreal* B) {
  for (int i = 0; i < 3; i++)
    for (int j = 0; j < 3; j++)
      R[3 * i + j] = A[3 * i] * B[j] + A[3 * i + 1] * B[3 + j] + A[3 * i + 2] * B[6 + j];
}

SAP_HD void SAPT(sapu_normalizeQuat)(sreal* q) {
  sreal n = SAP_SQRT(q[0] * q[0] + q[1] * q[1] + q[2] * q[2] + q[3] * q[3]);
  if (n > (sreal)1e-30) {
    sreal s = (sreal)1 / n;
    q[0] *= s; q[1] *= s; q[2] *= s; q[3] *= s;
  } else {
    q[0] = 1; q[1] = q[2] = q[3] = 0;
  }
}

/* r = a * b (Hamilton product) */
SAP_HD void SAPT(sapu_quatMul)(sreal* r, const sreal* a, const sreal* b) {
  sreal w = a[0] * b[0] - a[1] * b[1] - a[2] * b[2] - a[3] * b[3];
  sreal x = a[0] * b[1] + a[1] * b[0] + a[2] * b[3] - a[3] * b[2];
  sreal y = a[0] * b[2] - a[1] * b[3] + a[2] * b[0] + a[3] * b[1];
  sreal z = a[0] * b[3] + a[1] * b[2] - a[2] * b[1] + a[3] * b[0];
  r[0] = w; r[1] = x; r[2] = y; r[3] = z;
}

/* rotation matrix of a unit quaternion */
SAP_HD void SAPT(sapu_quat2Mat)(sreal* R, const sreal* q) {
  sreal w = q[0], x = q[1], y = q[2], z = q[3];
  R[0] = 1 - 2 * (y * y + z * z); R[1] = 2 * (x * y - w * z);     R[2] = 2 * (x * z + w * y);
  R[3] = 2 * (x * y + w * z);     R[4] = 1 - 2 * (x * x + z * z); R[5] = 2 * (y * z - w * x);
  R[6] = 2 * (x * z - w * y);     R[7] = 2 * (y * z + w * x);     R[8] = 1 - 2 * (x * x + y * y);
}

/* quaternion of a rotation by angle about a unit axis */
SAP_HD void SAPT(sapu_axisAngle2Quat)(sreal* q, const sreal* axis, sreal angle) {
  sreal s = SAP_SIN(angle * (sreal)0.5);
  q[0] = SAP_COS(angle * (sreal)0.5);
  q[1] = axis[0] * s; q[2] = axis[1] * s; q[3] = axis[2] * s;
}

/* q <- q * exp(w h / 2): rotate by body-frame angular velocity w over h (exact map) */
SAP_HD void SAPT(sapu_quatIntegrate)(sreal* q, const sreal* w, sreal h) {
  sreal n = SAP_SQRT(SAPT(sapu_dot3)(w, w));
  sreal angle = n * h;
  if (angle > (sreal)1e-12) {
    sreal axis[3] = {w[0] / n, w[1] / n, w[2] / n}, dq[4];
    SAPT(sapu_axisAngle2Quat)(dq, axis, angle);
    SAPT(sapu_quatMul)(q, q, dq);
  }
  SAPT(sapu_normalizeQuat)(q);
}

/* q <- normalize(q + h/2 q * [0, w]): first-order update, body-frame w */
SAP_HD void SAPT(sapu_quatEuler)(sreal* q, const sreal* w, sreal h) {
  sreal wq[4] = {0, w[0], w[1], w[2]}, dq[4];
  SAPT(sapu_quatMul)(dq, q, wq);
  for (int i = 0; i < 4; i++) q[i] += (sreal)0.5 * h * dq[i];
  SAPT(sapu_normalizeQuat)(q);
}

/* motion cross product: r = v x u, v = [w; vl] (spatial velocities) */
SAP_HD void SAPT(sapu_crossMotion)(sreal* r, const sreal* v, const sreal* u) {
  sreal a[3], b[3], c[3];
  SAPT(sapu_cross3)(a, v, u);
  SAPT(sapu_cross3)(b, v, u + 3);
  SAPT(sapu_cross3)(c, v + 3, u);
  r[0] = a[0]; r[1] = a[1]; r[2] = a[2];
  r[3] = b[0] + c[0]; r[4] = b[1] + c[1]; r[5] = b[2] + c[2];
}

/* force cross product: r = v x* f */
SAP_HD void SAPT(sapu_crossForce)(sreal* r, const sreal* v, const sreal* f) {
  sreal a[3], b[3], c[3];
  SAPT(sapu_cross3)(a, v, f);
  SAPT(sapu_cross3)(b, v + 3, f + 3);
  SAPT(sapu_cross3)(c, v, f + 3);
  r[0] = a[0] + b[0]; r[1] = a[1] + b[1]; r[2] = a[2] + b[2];
  r[3] = c[0]; r[4] = c[1]; r[5] = c[2];
}

/* rigid-body inertia at a reference point, 10 numbers: mass m, first moment
 * h = m c (c: com - ref), rotational inertia about ref (xx yy zz xy xz yz).
 * f = I [w; v]:  f_ang = I_ref w + h x v,  f_lin = m v + w x h */
SAP_HD void SAPT(sapu_mulInertVec)(sreal* f, const sreal* inert, const sreal* v) {
  const sreal* w = v;
  const sreal* lv = v + 3;
  const sreal* h = inert + 1;
  const sreal* J = inert + 4;
  sreal hv[3], wh[3];
  SAPT(sapu_cross3)(hv, h, lv);
  SAPT(sapu_cross3)(wh, w, h);
  f[0] = J[0] * w[0] + J[3] * w[1] + J[4] * w[2] + hv[0];
  f[1] = J[3] * w[0] + J[1] * w[1] + J[5] * w[2] + hv[1];
  f[2] = J[4] * w[0] + J[5] * w[1] + J[2] * w[2] + hv[2];
  f[3] = inert[0] * lv[0] + wh[0];
  f[4] = inert[0] * lv[1] + wh[1];
  f[5] = inert[0] * lv[2] + wh[2];
}

SAP_HD sreal SAPT(sapu_dot6)(const sreal* a, const sreal* b) {
  return a[0] * b[0] + a[1] * b[1] + a[2] * b[2] + a[3] * b[3] + a[4] * b[4] + a[5] * b[5];
}

#undef sreal

/* X-macro table of sapData's per-world arrays: X(type, field, count per world).
 * host/sim.c carves them from one allocation (each array 64-byte aligned, SAP_ALIGN; world-major);
 * the CUDA backend mirrors the same table. m = sapModel*, c = ncon_max.
 * Add a row here and a field in include/sapsim/data.h together. */

#define SAP_DATA_FIELDS(X, m, c)                                  \
  X(double, time, 1)                                              \
  X(double, qpos, (m)->nq)                                        \
  X(double, qvel, (m)->nv)                                        \
  X(double, ctrl, (m)->nu)                                        \
  X(double, ctrl_in, (m)->nu)                                     \
  X(double, history, (m)->nhistory)                               \
  X(double, act, (m)->na)                                         \
  X(double, qfrc_applied, (m)->nv)                                \
  X(double, xfrc_applied, (m)->nbody * 6)                         \
  X(double, mocap_pos, (m)->nmocap * 3)                           \
  X(double, mocap_quat, (m)->nmocap * 4)                          \
  X(int, eq_active, (m)->neq)                                     \
  X(int, tree_asleep, (m)->ntree)                                 \
  X(double, sleep_qpos, (m)->sleep ? (m)->nq : 0)                 \
  X(int, sleep_work, (m)->sleep ? 2 * (m)->ntree : 0)             \
  X(double, xpos, (m)->nbody * 3)                                 \
  X(double, xquat, (m)->nbody * 4)                                \
  X(double, xmat, (m)->nbody * 9)                                 \
  X(double, xipos, (m)->nbody * 3)                                \
  X(double, ximat, (m)->nbody * 9)                                \
  X(double, xanchor, (m)->njnt * 3)                               \
  X(double, xaxis, (m)->njnt * 3)                                 \
  X(double, geom_xpos, (m)->ngeom * 3)                            \
  X(double, geom_xmat, (m)->ngeom * 9)                            \
  X(double, cref, (m)->nbody * 3)                                 \
  X(double, cdof, (m)->nv * 6)                                    \
  X(double, qA, (m)->nA)                                          \
  X(double, qfrc_bias, (m)->nv)                                   \
  X(double, qfrc_passive, (m)->nv)                                \
  X(double, qfrc_actuator, (m)->nv)                               \
  X(double, vstar, (m)->nv)                                       \
  X(double, vnext, (m)->nv)                                       \
  X(double, subtree_com, (m)->nbody * 3)                          \
  X(double, cinert, (m)->nbody * 10)                              \
  X(double, cvel, (m)->nbody * 6)                                 \
  X(double, cfrc_ext, (m)->nbody * 6)                             \
  X(double, sensordata, (m)->nsensordata)                        \
  X(double, sensor_raw, (m)->nsensorhist ? (m)->nsensordata : 0) \
  X(int, ncon, 1)                                                 \
  X(int, ncon_dropped, 1)                                         \
  X(double, con_drop, 2)                                          \
  X(int, con_geom, (c) * 2)                                       \
  X(double, con_pos, (c) * 6)                                     \
  X(double, con_frame, (c) * 9)                                   \
  X(double, con_dist, (c))                                        \
  X(double, con_mu, (c))                                          \
  X(double, con_k, (c))                                           \
  X(double, con_taud, (c))                                        \
  X(int, world_flags, 1)                                          \
  X(int, newton_iter, 1)                                          \
  X(int, ls_iter, 1)                                              \
  X(int, nfactor, 1)                                              \
  X(int, ls_eval, 1)                                              \
  X(int, ncon_solved, 1)                                          \
  X(int, ncon_promoted, 1)                                        \
  X(double, geom_vspeed, (m)->contact_band ? (m)->ngeom : 0)      \
  X(double, geom_vbudget, (m)->contact_band ? (m)->ngeom : 0)     \
  X(double, band_h, (m)->contact_band ? 1 : 0)                    \
  X(double, band_vlast, (m)->contact_band ? (m)->nv : 0)          \
  X(double, band_work, (m)->contact_band ? 7 * (m)->nbody : 0)    \
  X(int, band_out, (m)->contact_band ? (m)->ngeom : 0)            \
  X(int, band_redo, (m)->contact_band ? 1 : 0)                    \
  X(int, band_redos, (m)->contact_band ? 1 : 0)                   \
  X(int, iter_hist, 2 * SAP_ITER_BINS)                            \
  X(double, iter_sum, 2)                                          \
  X(int, iter_max, 2)

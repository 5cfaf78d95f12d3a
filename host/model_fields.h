/* X-macro table of sapModel's arrays: X(type, field, count). host/model.c carves
 * them from one allocation and rebases them on copies; the CUDA backend uploads
 * the same table. */
#define SAP_MODEL_FIELDS(X, m)                                   \
  X(int, body_parentid, (m)->nbody)                              \
  X(int, body_rootid, (m)->nbody)                                \
  X(int, body_weldid, (m)->nbody)                                \
  X(int, body_jntnum, (m)->nbody)                                \
  X(int, body_jntadr, (m)->nbody)                                \
  X(int, body_dofnum, (m)->nbody)                                \
  X(int, body_dofadr, (m)->nbody)                                \
  X(int, body_geomnum, (m)->nbody)                               \
  X(int, body_geomadr, (m)->nbody)                               \
  X(int, body_mocapid, (m)->nbody)                               \
  X(double, body_pos, (m)->nbody * 3)                            \
  X(double, body_quat, (m)->nbody * 4)                           \
  X(double, body_ipos, (m)->nbody * 3)                           \
  X(double, body_iquat, (m)->nbody * 4)                          \
  X(double, body_mass, (m)->nbody)                               \
  X(double, body_inertia, (m)->nbody * 3)                        \
  X(double, body_gravcomp, (m)->nbody)                           \
  X(int, body_treeid, (m)->nbody)                                \
  X(int, jnt_type, (m)->njnt)                                    \
  X(int, jnt_qposadr, (m)->njnt)                                 \
  X(int, jnt_dofadr, (m)->njnt)                                  \
  X(int, jnt_bodyid, (m)->njnt)                                  \
  X(int, jnt_limited, (m)->njnt)                                 \
  X(double, jnt_pos, (m)->njnt * 3)                              \
  X(double, jnt_axis, (m)->njnt * 3)                             \
  X(double, jnt_stiffness, (m)->njnt)                            \
  X(double, jnt_stiffnesspoly, (m)->njnt * SAP_NPOLY)            \
  X(double, jnt_range, (m)->njnt * 2)                            \
  X(double, jnt_margin, (m)->njnt)                               \
  X(int, jnt_actfrcsum, (m)->njnt)                               \
  X(double, jnt_actfrcrange, (m)->njnt * 2)                      \
  X(int, dof_bodyid, (m)->nv)                                    \
  X(int, dof_jntid, (m)->nv)                                     \
  X(int, dof_parentid, (m)->nv)                                  \
  X(int, dof_segstart, (m)->nv)                                  \
  X(int, dof_treeend, (m)->nv)                                   \
  X(int, dof_Alo, (m)->nv)                                       \
  X(int, dof_Ahi, (m)->nv)                                       \
  X(int, dof_Aadr, (m)->nv)                                      \
  X(double, dof_armature, (m)->nv)                               \
  X(double, dof_damping, (m)->nv)                                \
  X(double, dof_dampingpoly, (m)->nv * SAP_NPOLY)                \
  X(double, dof_frictionloss, (m)->nv)                           \
  X(int, dof_treeid, (m)->nv)                                    \
  X(double, dof_length, (m)->nv)                                 \
  X(int, tree_bodyadr, (m)->ntree)                               \
  X(int, tree_bodynum, (m)->ntree)                               \
  X(int, tree_dofadr, (m)->ntree)                                \
  X(int, tree_dofnum, (m)->ntree)                                \
  X(int, tree_sleep_policy, (m)->ntree)                          \
  X(double, qpos0, (m)->nq)                                      \
  X(double, qpos_spring, (m)->nq)                                \
  X(int, geom_type, (m)->ngeom)                                  \
  X(int, geom_bodyid, (m)->ngeom)                                \
  X(int, geom_contype, (m)->ngeom)                               \
  X(int, geom_conaffinity, (m)->ngeom)                           \
  X(int, geom_dataid, (m)->ngeom)                                \
  X(double, geom_size, (m)->ngeom * 3)                           \
  X(double, geom_pos, (m)->ngeom * 3)                            \
  X(double, geom_quat, (m)->ngeom * 4)                           \
  X(double, geom_rbound, (m)->ngeom)                             \
  X(double, geom_margin, (m)->ngeom)                             \
  X(double, geom_gap, (m)->ngeom)                                \
  X(double, geom_surfacevel, (m)->nsurfacevel ? (m)->ngeom * 6 : 0) \
  X(double, geom_fluid, (m)->ngeom * 12)                         \
  X(double, geom_mu, (m)->ngeom)                                 \
  X(double, geom_friction, (m)->ngeom * 3)                       \
  X(int, geom_priority, (m)->ngeom)                              \
  X(double, geom_k, (m)->ngeom)                                  \
  X(double, geom_taud, (m)->ngeom)                               \
  X(double, geom_detect, (m)->ngeom)                             \
  X(int, geom_rayskip, (m)->ngeom)                               \
  X(int, mesh_vertadr, (m)->nmesh)                               \
  X(int, mesh_vertnum, (m)->nmesh)                               \
  X(double, mesh_vert, (m)->nmeshvert * 3)                       \
  X(int, mesh_hulladr, (m)->nmesh)                               \
  X(int, mesh_hullnum, (m)->nmesh)                               \
  X(int, mesh_hullstart, (m)->nmesh * 6)                         \
  X(double, mesh_hullvert, (m)->nmeshhull * 3)                   \
  X(int, mesh_hullnbradr, (m)->nmeshhull)                        \
  X(int, mesh_hullnbr, (m)->nmeshhullnbr)                        \
  X(int, mesh_faceadr, (m)->nmesh)                               \
  X(int, mesh_facenum, (m)->nmesh)                               \
  X(int, mesh_face, (m)->nmeshface * 3)                          \
  X(double, hfield_size, (m)->nhfield * 4)                       \
  X(int, hfield_nrow, (m)->nhfield)                              \
  X(int, hfield_ncol, (m)->nhfield)                              \
  X(int, hfield_adr, (m)->nhfield)                               \
  X(float, hfield_data, (m)->nhfielddata)                        \
  X(int, exclude_body, (m)->nexclude * 2)                        \
  X(int, pair_geom, (long long)(m)->npair_max * 2)                \
  X(int, pair_explicit, (m)->npair_max)                          \
  X(int, pair_condim, (m)->npair_max)                            \
  X(double, pair_mu, (m)->npair_max)                             \
  X(double, pair_torsion, (m)->npair_max)                        \
  X(double, pair_rolling, (m)->npair_max)                        \
  X(double, pair_margin, (m)->npair_max)                         \
  X(double, pair_gap, (m)->npair_max)                            \
  X(double, pair_adhesion, (m)->npair_max)                       \
  X(double, pair_detect, (m)->npair_max)                         \
  X(double, pair_k, (m)->npair_max)                              \
  X(double, pair_taud, (m)->npair_max)                           \
  X(int, pair_order, (m)->npair_max)                             \
  X(int, pair_stageadr, (m)->npair_max + 1)                      \
  X(int, pair_geomadr, (m)->ngeom + 1)                           \
  X(int, actuator_kind, (m)->nu)                                 \
  X(int, actuator_trntype, (m)->nu)                              \
  X(int, actuator_trnid, (m)->nu)                                \
  X(int, actuator_ctrllimited, (m)->nu)                          \
  X(int, actuator_forcelimited, (m)->nu)                         \
  X(double, actuator_gear, (m)->nu)                              \
  X(double, actuator_jntgear, (m)->nu * 6)                       \
  X(int, actuator_inparent, (m)->nu)                             \
  X(int, actuator_disabled, (m)->nu)                             \
  X(double, actuator_wrap, (m)->nu)                              \
  X(double, actuator_gain, (m)->nu)                              \
  X(double, actuator_bias, (m)->nu)                              \
  X(double, actuator_ctrlrange, (m)->nu * 2)                     \
  X(double, actuator_forcerange, (m)->nu * 2)                    \
  X(double, actuator_kp, (m)->nu)                                \
  X(double, actuator_kv, (m)->nu)                                \
  X(int, actuator_dyntype, (m)->nu)                              \
  X(double, actuator_dynprm, (m)->nu * 3)                        \
  X(int, actuator_actadr, (m)->nu)                               \
  X(int, actuator_actnum, (m)->nu)                               \
  X(int, actuator_actlimited, (m)->nu)                           \
  X(double, actuator_actrange, (m)->nu * 2)                      \
  X(int, actuator_actearly, (m)->nu)                             \
  X(int, actuator_muscle, (m)->nu)                               \
  X(double, actuator_gainslope, (m)->nu * 2)                     \
  X(double, actuator_gainprm, (m)->nu * SAP_NMUSCLEPRM)          \
  X(double, actuator_biasprm, (m)->nu * SAP_NMUSCLEPRM)          \
  X(double, actuator_lengthrange, (m)->nu * 2)                   \
  X(double, actuator_acc0, (m)->nu)                              \
  X(double, actuator_delay, (m)->nu)                             \
  X(int, actuator_nsample, (m)->nu)                              \
  X(int, actuator_interp, (m)->nu)                               \
  X(int, actuator_historyadr, (m)->nu)                           \
  X(int, actuator_sitebody, (m)->nu)                             \
  X(double, actuator_site, (m)->nu * 13)                         \
  X(int, actuator_refbody, (m)->nu)                              \
  X(double, actuator_refsite, (m)->nu * 7)                       \
  X(double, actuator_cranklength, (m)->nu)                       \
  X(int, tendon_adr, (m)->ntendon)                               \
  X(int, tendon_num, (m)->ntendon)                               \
  X(int, tendon_limited, (m)->ntendon)                           \
  X(double, tendon_frictionloss, (m)->ntendon)                   \
  X(int, tendon_actfrcsum, (m)->ntendon)                         \
  X(double, tendon_actfrcrange, (m)->ntendon * 2)                \
  X(double, tendon_range, (m)->ntendon * 2)                      \
  X(double, tendon_margin, (m)->ntendon)                         \
  X(double, tendon_stiffness, (m)->ntendon)                      \
  X(double, tendon_stiffnesspoly, (m)->ntendon * SAP_NPOLY)      \
  X(double, tendon_damping, (m)->ntendon)                        \
  X(double, tendon_dampingpoly, (m)->ntendon * SAP_NPOLY)        \
  X(double, tendon_lengthspring, (m)->ntendon * 2)               \
  X(int, wrap_jnt, (m)->nwrap)                                   \
  X(double, wrap_coef, (m)->nwrap)                               \
  X(double, wrap_pos, (m)->nwrap * 3)                            \
  X(int, tendon_spatial, (m)->ntendon)                           \
  X(double, tendon_armature, (m)->ntendon)                        \
  X(int, wrap_type, (m)->nwrap)                                  \
  X(int, wrap_side, (m)->nwrap)                                  \
  X(int, eq_type, (m)->neq)                                      \
  X(int, eq_active0, (m)->neq)                                   \
  X(int, eq_obj1id, (m)->neq)                                    \
  X(int, eq_obj2id, (m)->neq)                                    \
  X(double, eq_data, (m)->neq * SAP_EQ_NDATA)                    \
  X(int, sensor_type, (m)->nsensor)                              \
  X(int, sensor_stage, (m)->nsensor)                             \
  X(int, sensor_datatype, (m)->nsensor)                          \
  X(int, sensor_objtype, (m)->nsensor)                           \
  X(int, sensor_objid, (m)->nsensor)                             \
  X(int, sensor_reftype, (m)->nsensor)                           \
  X(int, sensor_refid, (m)->nsensor)                             \
  X(int, sensor_adr, (m)->nsensor)                               \
  X(int, sensor_dim, (m)->nsensor)                               \
  X(int, sensor_body, (m)->nsensor * 2)                          \
  X(double, sensor_frame, (m)->nsensor * 14)                     \
  X(double, sensor_cutoff, (m)->nsensor)                         \
  X(int, sensor_zonetype, (m)->nsensor)                          \
  X(double, sensor_zonesize, (m)->nsensor * 3)                   \
  X(int, sensor_raydata, (m)->nsensor)                           \
  X(int, sensor_condata, (m)->nsensor * 2)                       \
  X(int, sensor_nsample, (m)->nsensor)                           \
  X(int, sensor_interp, (m)->nsensor)                            \
  X(double, sensor_delay, (m)->nsensor)                          \
  X(double, sensor_interval, (m)->nsensor * 2)                   \
  X(int, sensor_historyadr, (m)->nsensor)                        \
  X(double, key_time, (m)->nkey)                                 \
  X(double, key_qpos, (long long)(m)->nkey * (m)->nq)             \
  X(double, key_qvel, (long long)(m)->nkey * (m)->nv)             \
  X(double, key_ctrl, (long long)(m)->nkey * (m)->nu)             \
  X(double, key_act, (long long)(m)->nkey * (m)->na)              \
  X(double, key_mpos, (long long)(m)->nkey * (m)->nmocap * 3)     \
  X(double, key_mquat, (long long)(m)->nkey * (m)->nmocap * 4)    \
  X(int, name_bodyadr, (m)->nbody)                               \
  X(int, name_jntadr, (m)->njnt)                                 \
  X(int, name_geomadr, (m)->ngeom)                               \
  X(int, name_actuatoradr, (m)->nu)                              \
  X(int, name_keyadr, (m)->nkey)                                 \
  X(int, name_sensoradr, (m)->nsensor)                           \
  X(char, names, (m)->nnames)

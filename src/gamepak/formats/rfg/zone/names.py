"""Names of zone object classes and properties, from their hashes.

Classes are hashed with Volition's rotate hash (the packfile's `name_hash`), properties with
Volition's CRC: the reflected CRC-32 table started at 0 and not inverted at the end, which is
`~zlib.crc32(name, 0xFFFFFFFF)`. Both lower-case the name first. The lists below are the names
the community's zone tools know (RfgZonexFormat.md, RfgTools++'s property tables and RFGM's
hash dictionary); they name every class and property of the game's layers we have seen. A
hash no list names stays a hash (`0x%08X`): a guessed name is never put in its place.

PROPERTY_KINDS says how a type-5 or type-6 value of that name is laid out (see `values`). The
width always comes from the stored size: a name whose kind does not fit its size stays bytes.
"""

from __future__ import annotations

import zlib

from ..records import name_hash as class_hash

U32 = 0xFFFFFFFF


def _words(text: str) -> list[str]:
    """A list of names written as text (a few hundred names read better so than as literals)."""
    return text.split()


CLASS_NAMES = _words(
    """
rfg_mover shape_cutter object_effect district multi_object_backpack
multi_object_flag multi_object_marker object_action_node player object_patrol navpoint
cover_node general_mover constraint item npc object_squad ladder obj_zone object_restricted_area
object_safehouse trigger_region projectile turret object_convoy object_vehicle_spawn_node
object_npc_spawn_node object_squad_spawn_node object_turret_spawn_node object_spawn_region
object_demolitions_master_node object_activity_spawn object_area_defense_node object_bftp_node
object_house_arrest_node object_mission_start_node player_start object_riding_shotgun_node
object_upgrade_node object_debris object_raid_node object_air_strike_defense_node
object_bounding_box object_dummy object_convoy_end_point object_path_road
object_courier_end_point object_delivery_node object_guard_node obj_light marauder_ambush_region
object_roadblock_node object_ambient_behavior_region automobile flyer walker weapon edit_obj
obj_chunk_ref stitch_piece decal terrain_decal layer constraint_point constraint_hinge
constraint_prism constraint_motor navmesh_cutout invisible_wall collision_box note
object_foliage force_field_door effect_streaming_node obj_occluder object_ambient_spawn_node
"""
)

# name -> value kind, for the names whose layout is known (values.KINDS).
_KINDS_BY_NAME = {
    "string": """
        district terrain_file_name ambient_spawn mission_info mp_team item_type default_orders
        squad_def respawn_speed vehicle_type spawn_set chunk_name props building_type
        gameplay_props chunk_flags display_name turret_type animation_type weapon_type
        bounding_box_type trigger_shape trigger_flags region_kill_type region_type convoy_type
        home_district raid_type house_arrest_type activity_type delivery_type courier_type
        streamed_effect display_name_tag upgrade_type riding_shotgun_type area_defense_type
        dummy_type demolitions_master_type team sound_alr sound visual behavior roadblock_type
        type_enum clip_mesh light_flags backpack_type marker_type area_type spawn_resource_data
        parent_name name note_text
    """,
    "bool": """
        respawn respawns checkpoint_respawn initial_spawn activity_respawn special_npc
        safehouse_vip special_vehicle hands_off_raid_squad radio_operator squad_vehicle
        miner_persona raid_spawn no_reassignment disable_ambient_parking player_vehicle_respawn
        no_defensive_combat preplaced enabled indoor no_stub autostart high_priority run_to
        infinite_duration no_check_in combat_ready looping_patrol marauder_raid
        ASD_truck_partol courier_patrol override_patrol allow_ambient_peds disabled tag_node
        start_node end_game_only visible vehicle_only npc_only dead_body looping
        use_object_orient random_backpacks liberated liberated_play_line
    """,
    "f32": """
        wind_min_speed wind_max_speed spawn_prob night_spawn_prob angle_left angle_right
        rotation_limit game_destroyed_pct outer_radius night_trigger_prob day_trigger_prob
        speed_limit hotspot_falloff_size atten_range aspect hotspot_size atten_start atten_end
        control control_max morale morale_max warning_radius
    """,
    "u32": """
        gm_flags dest_checksum uid next prev mtype group_id ladder_rungs min_ambush_squads
        max_ambush_squads host_index child_index child_alt_hk_body_index host_alt_hk_body_index
        host_handle child_handle path_road_flags patrol_start yellow_num_points
        yellow_num_triangles warning_num_points warning_num_triangles pair_number group priority
        num_backpacks
    """,
    "u8": "nav_type exp_info district_flags",
    "u16": "binary_flags",
    "vec3": "just_pos clr_orig min_clip max_clip",
    "mat33": "nav_orient",
    "bbox": "bb",
    "op": "op",
    "u16_list": "yellow_triangles warning_triangles world_anchors path_road_data",
    "vec2_list": "yellow_polygon warning_polygon",
    "u32_list": "obj_links dynamic_links path_road_struct",
}
PROPERTY_KINDS: dict[str, str] = {name: kind for kind, names in _KINDS_BY_NAME.items() for name in names.split()}

# Known property names without a known layout: named, their values kept as bytes.
_OTHER_PROPERTY_NAMES = _words(
    """
pos orient explosion_event game_parent game_parent_obj_num persistent
auto_restore mp_modes stick_to_terrain terrain_morphing terrain_falloff terrain_radius terrain
zone_hash spawn_resource invisible_walls zone_flags scale color_lerp SCALE_Y_BOTTOM extrude_dir
extend_downward play_effect marker_distance marker_density marker_model zone srid bmin bmax
chunk properties gameplay_properties importance squads squad display_radius min_pa_radius
revision touch_terrain piece_flags unwalkable light remove_cells pf_type decal_entry use_diffuse
diffuse normal specular spec_power spec_alpha rotation_restriction scale_restriction chunk_uid
shape_uid civilian_count flags building_type_internal force_dynamic casts_shadows dynamic_object
decal_list casts_drop_shadows importance_internal team_internal lod_off_distance rfg_flags shape
donor_shape shape_state shape_state_size show_on_map destruct_uid damage_percent
fully_destroyed_percent regenerate salvage_material salvage_num_pieces invulnerable
plume_on_death one_of_many mining supply_crate stream_out_play_time building c_obj_id ctype mass
com tensor idx sh_ptr original_object hitpoints dislodge_hitpoints template host_hk_alt_index
child_hk_alt_index point_constraint_type spring_length min_x max_x min_y max_y min_z max_z
threshold limited max_ang min_ang friction max min angular_speed gain ladder_enabled ambient
edf_only marauder guerrilla one_way other_way special reinforcements GPS type veh_flags
pos_at_ground initial_speed move_at_stream_flags immediate_spawn dist def_angle_left
def_angle_right off_angle_left off_angle_right stance firing_flags cover_type covernode_data cnp
guarded_object rendermesh default_orders_id dummy_type_internal light_type fvec
show_attenuation_spheres show_clip_box navpoint_type navlinks ref link_status cross_zone_link
cross_zone_num dont_follow_road ignore_lanes navpoint_data npp branch_type links tint
patroled_object squad_def_index spawn_status original_pos vehicle_ref squad_flags npc_flags
human_flags vehicle_flags vehicle_hp_mult node_handle map_icon_type convoy_disabled
convoy_suspended activity_completed convoy_def courier_completed courier_def courier_node
courier_start demolitions_master_best_time demolitions_master_complete
demolitions_master_discovered demolitions_master_par_beaten demolitions_master_times_completed
riding_shotgun_completed area_defense_completed delivery_flags best_time bftp_flags collected
enabled_bomb prj_owner_h prj_w_info prj_pflags prj_target prj_vel prj_cur_vel prj_end_pos
prj_duration prj_age_timer prj_start_pos prj_max_vel prj_detonate_ts prj_client_nonce
prj_fired_in_slew tinfo attach_tag weapon_owner rendermesh_weapon gun_pos gun_orient npc_type
persona_name npc_info manager creator in_vehicle load_out ambient_behavior h_int_exp_ts h_ack_ts
h_health_ts h_look_at_fin_ts h_reported_ts h_restore_inv nav_cell game_data_handle multi-team
item_info mass_override deletion_timer item_prop_type item_srid material host_tag position
orientation volume attached_to_camera attached_to_camera_orient visual_handle sound_handle
sound_alr_handle source_handle inner_radius wep_info wep_info_name wep_mag_rnds wep_res_rnds
wep_flags wep_refire_delay wep_reload_delay wep_last_fired_timer c_info render_scale char_scale
indoors oc_shape source owner shape_cutter_type w_info zone_serialized player_start
vehicle_spawns buildings trigger_regions disabled_flags display_name_hash grid_index index
grid_color VFX_tint ped_spawn_density ped_spawn_group veh_spawn_density veh_spawn_group
driver_spawn_group
"""
)

# Property names whose u32 value is the handle of another object (a removal checks them).
HANDLE_PROPERTIES = frozenset({"host_handle", "child_handle", "next", "prev", "guarded_object", "patroled_object"})
HANDLE_LIST_PROPERTIES = frozenset({"obj_links", "dynamic_links"})


def property_hash(name: str) -> int:
    """Volition's CRC of a property name (lower-cased): `~crc32(name, 0xFFFFFFFF)`."""
    return ~zlib.crc32(name.lower().encode("latin-1"), U32) & U32


class Names:
    """Names for class and property hashes: the shipped lists plus any the user adds."""

    def __init__(self, extra: list[str] | tuple[str, ...] = ()) -> None:
        self.classes: dict[int, str] = {}
        self.properties: dict[int, str] = {}
        for name in CLASS_NAMES:
            self.classes.setdefault(class_hash(name.encode("latin-1")), name)
        for name in (*PROPERTY_KINDS, *_OTHER_PROPERTY_NAMES):
            self.properties.setdefault(property_hash(name), name)
        for name in extra:
            self.add(name)

    def add(self, name: str) -> None:
        """Know `name` as a class and as a property (whichever hash matches is used)."""
        encoded = name.encode("latin-1", "replace")
        self.classes.setdefault(class_hash(encoded), name)
        self.properties.setdefault(property_hash(name), name)

    def class_name(self, value: int) -> str | None:
        return self.classes.get(value)

    def property_name(self, value: int) -> str | None:
        return self.properties.get(value)

    def class_hash_of(self, name: str) -> int:
        return class_hash(name.encode("latin-1"))


_DEFAULT: Names | None = None


def default_names() -> Names:
    """The shipped names (built once)."""
    global _DEFAULT
    if _DEFAULT is None:
        _DEFAULT = Names()
    return _DEFAULT


def read_name_list(text: str) -> list[str]:
    """Names from a `--names` file: one per line, `#` starts a comment."""
    names = []
    for line in text.splitlines():
        line = line.split("#", 1)[0].strip()
        if line:
            names.append(line)
    return names

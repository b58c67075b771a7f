package fiojob

import "strings"

// fioNames are the option names fio 3.33 lists (`fio --cmdhelp=all` and
// `fio --enghelp=ENGINE` for its engines). A refusal names an option
// only when fio or ioprobe knows it: any other line's text (an included
// file may be anything, /etc/shadow through a symlink) is not quoted.
var fioNames = func() map[string]bool {
	m := map[string]bool{}
	for _, n := range strings.Fields(fioNameList) {
		m[n] = true
	}
	return m
}()

// knownOption says whether key is an option fio or ioprobe knows, so
// that a refusal may name it.
func knownOption(key string) bool {
	if fioNames[key] {
		return true
	}
	_, h := handlers[key]
	_, a := accepted[key]
	return h || a || limitKeys[key]
}

const fioNameList = `
allow_file_create allow_mounted_write allrandrepeat arguments
atomic ba bindname block_error_percentiles bs bs_unaligned bsrange
bssplit buffer_compress_chunk buffer_pattern buffered bwavgtime cgroup
cgroup_nodelete cgroup_weight clat_percentiles clocksource cmd_type cmdprio
cmdprio_bssplit cmdprio_class cmdprio_percentage continue_on_error cpumask
cpus_allowed cpus_allowed_policy create_fsync create_on_open create_only
create_serialize dedupe_global dedupe_mode dedupe_percentage description
direct directory disable_clat disable_lat disable_slat disk_util do_verify
donorname end_fsync error_dump exec_postrun exec_prerun exit_what exitall
exitall_on_error experimental_verify fadvise_hint fallocate fdatasync
file_append file_service_type filename filename_format filesize fill_device
fixedbufs flow flow_id flow_sleep force_async fsync fsync_on_close gid
grace_time group_reporting gtod_cpu gtod_reduce hipri hipri_percentage
hostname ignore_error ignore_zone_limits inplace interface invalidate
io_size io_submit_mode iodepth iodepth_batch iodepth_low ioengine
iopsavgtime ioscheduler job_max_open_zones kb_base lat_percentiles
latency_percentile latency_run latency_target latency_window listen
lockfile lockmem log_alternate_epoch log_avg_msec log_compression
log_compression_cpus log_entries log_hist_coarseness log_hist_msec
log_max_value log_offset log_prio log_store_compressed log_unix_epoch loops
max_latency max_open_zones mem merge_blktrace_file merge_blktrace_iters
merge_blktrace_scalars mss name new_group nice nodelay nonvectored
norandommap nowait nrfiles numa_cpu_nodes numa_mem_policy number_ios
numjobs offset offset_align offset_increment opendir openfiles overwrite
per_job_logs percentage_random percentile_list pingpong port pre_read
prio prioclass profile program protocol ramp_time random_distribution
random_generator randrepeat randseed rate rate_cycle rate_ignore_thinktime
rate_iops rate_iops_min rate_min rate_process read_beyond_wp read_iolog
read_iolog_chunked readfua refill_buffers registerfiles replay_align
replay_no_stall replay_redirect replay_scale replay_skip replay_time_scale
runtime rw rw_sequencer rwmixread rwmixwrite scramble_buffers
serialize_overlap sg_write_mode significant_figures size slat_percentiles
sqthread_poll sqthread_poll_cpu startdelay stat_type stats std_redirect
steadystate steadystate_duration steadystate_ramp_time stonewall stream_id
sync sync_file_range thinktime thinktime_blocks thinktime_blocks_type
thinktime_iotime thinktime_spin thp thread time_based trim_backlog
trim_backlog_batch trim_percentage trim_verify_zero ttl uid uncached
unified_rw_reporting unique_filename unit_base unlink unlink_each_loop uri
userspace_reap verb verify verify_async verify_backlog verify_backlog_batch
verify_dump verify_fatal verify_interval verify_offset verify_only
verify_pattern verify_state_load verify_state_save wait_for window_size
write_barrier write_bw_log write_hint write_hist_log write_iolog
write_iops_log write_lat_log writefua zero_buffers zone_reset_frequency
zone_reset_threshold zonecapacity zonemode zonerange zonesize zoneskip
`

// limitKeys are the options applyLimit reads.
var limitKeys = map[string]bool{"io_size": true, "io_limit": true, "number_ios": true, "loops": true, "startdelay": true,
	"thinktime": true, "thinktime_spin": true, "thinktime_iotime": true, "thinktime_blocks": true, "thinktime_blocks_type": true}

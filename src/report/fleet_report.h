/* The fleet's report in each format (src/report/fleet_report.c); the
 * printers call these for IB_RESULT_FLEET. Each malloc'ed, NULL when
 * memory ran out. */
#ifndef IB_REPORT_FLEET_REPORT_H
#define IB_REPORT_FLEET_REPORT_H

#include "report/report.h"

char *ib__fleet_report_text(const ib_fleet_result *f, const ib_workload_info *info);
/* cfg: the measurement's options (NULL: none recorded). */
char *ib__fleet_report_json(const ib_fleet_result *f, const ib_workload_info *info, const ib_config *cfg);
char *ib__fleet_report_csv(const ib_fleet_result *f, const ib_workload_info *info);
char *ib__fleet_report_md(const ib_fleet_result *f, const ib_workload_info *info);
char *ib__fleet_report_html(const ib_fleet_result *f, const ib_workload_info *info);

/* serve --devices (f->serve set): the same formats over every rate
 * (src/report/fleet_serve_report.c). */
char *ib__fleet_serve_report_text(const ib_fleet_result *f, const ib_workload_info *info);
char *ib__fleet_serve_report_json(const ib_fleet_result *f, const ib_workload_info *info);
char *ib__fleet_serve_report_csv(const ib_fleet_result *f, const ib_workload_info *info);
char *ib__fleet_serve_report_md(const ib_fleet_result *f, const ib_workload_info *info);
char *ib__fleet_serve_report_html(const ib_fleet_result *f, const ib_workload_info *info);

/* Pieces of the fleet's reports that serve's share. */
/* "rank 3 (host a, local 1)" under MPI, "device 2" else. */
void ib__fleet_worker_label(char *buf, size_t cap, const ib_fleet_worker *w);
/* "none", or the NVML reason bits in hex. */
void ib__fleet_throttle_text(char *buf, size_t cap, unsigned long long reasons);
/* The GPU state's cells: "97%", "45 C", "310 W", "-" where unknown (a CPU
 * worker, no NVML). */
void ib__fleet_gpu_cells(const ib_fleet_worker *w, char clock[16], char temp[16], char power[16]);
/* The host's lines (sum over the window, pooled latency, straggler) and
 * the failed workers' and the mixed devices' lines, each line starting
 * with bullet: text and Markdown. */
void ib__fleet_aggregate_lines(ib__sbuf *b, const ib_fleet_result *f, const char *bullet);
void ib__fleet_failures(ib__sbuf *b, const ib_fleet_result *f, const char *bullet);
/* A worker (who, figures, GPU state, kept samples) and the aggregate as
 * JSON objects. */
cJSON *ib__fleet_json_worker(const ib_fleet_worker *w);
cJSON *ib__fleet_json_aggregate(const ib_fleet_result *f);
/* Closes a page: text (freed here; NULL: none) as <pre>, then the end. */
void ib__fleet_html_text_and_end(ib__sbuf *b, char *text);

#endif

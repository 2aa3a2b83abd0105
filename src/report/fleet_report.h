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

#endif

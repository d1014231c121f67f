/* simpler — the one log sink of the process (libsimpler_log.so, C API).
 *
 * Every native part of simpler (the sim driver, the runtime builds' engine, the worker)
 * writes its log lines here; the process has one instance of this library, so one sink
 * and one threshold. Levels are Python's `logging` numbers, so the Python bridge maps
 * them one to one (docs/logging.md).
 *
 * Threshold: $SIMPLER_LOG_LEVEL (debug, info, warning, error, off, or a number), read at
 * the first use; default WARNING. The legacy SIMPLER_LOG=debug still means DEBUG.
 * Sink: by default one line on stderr, "simpler <LEVEL> <component>: <message>";
 * simpler_log_set_sink replaces it (the Python module routes it to logging "simpler").
 */
#ifndef SIMPLER_LOG_LOG_H
#define SIMPLER_LOG_LOG_H

#include <stdarg.h>

#ifdef __cplusplus
extern "C" {
#endif

#define SIMPLER_LOG_API __attribute__((visibility("default")))

enum {
  SIMPLER_LOG_LEVEL_DEBUG = 10,
  SIMPLER_LOG_LEVEL_INFO = 20,
  SIMPLER_LOG_LEVEL_WARNING = 30,
  SIMPLER_LOG_LEVEL_ERROR = 40,
  SIMPLER_LOG_LEVEL_OFF = 100
};

/* Receives every line at or above the threshold, on the thread that logged it. Must not
 * block for long or call back into simpler_log. `component` names the part ("orch",
 * "worker", "sim", ...); both strings live only for the call. */
typedef void (*simpler_log_sink_fn)(void* user, int level, const char* component,
                                    const char* message);

/* True when a line at `level` would be delivered (cheap: one atomic load). */
SIMPLER_LOG_API int simpler_log_enabled(int level);
SIMPLER_LOG_API int simpler_log_threshold(void);
SIMPLER_LOG_API void simpler_log_set_threshold(int level);
/* 1 when $SIMPLER_LOG_LEVEL (or SIMPLER_LOG) chose the threshold, else 0. */
SIMPLER_LOG_API int simpler_log_threshold_from_env(void);
/* NULL restores the default stderr sink. Returns once no thread is inside the old sink. */
SIMPLER_LOG_API void simpler_log_set_sink(simpler_log_sink_fn sink, void* user);
/* Formats (printf) and delivers one line when `level` passes the threshold. */
SIMPLER_LOG_API void simpler_log(int level, const char* component, const char* format, ...)
    __attribute__((format(printf, 3, 4)));
SIMPLER_LOG_API void simpler_log_v(int level, const char* component, const char* format,
                                   va_list args);
/* "DEBUG", "INFO", "WARNING", "ERROR" (the nearest level at or below), "OFF". */
SIMPLER_LOG_API const char* simpler_log_level_name(int level);
/* Parses a level name (case-insensitive; "warn" too) or number; -1 when unknown. */
SIMPLER_LOG_API int simpler_log_parse_level(const char* text);

#ifdef __cplusplus
} /* extern "C" */
#endif

#endif /* SIMPLER_LOG_LOG_H */

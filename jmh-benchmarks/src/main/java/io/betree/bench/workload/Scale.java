package io.betree.bench.workload;

/**
 * The size of a benchmark run. Three presets: {@code tiny} (the JUnit smoke test), {@code smoke}
 * (run.sh smoke, seconds per engine) and {@code full} (a data set ten times or more the cache,
 * minutes per engine). {@code smoke-small} and {@code full-small} are their small-cache variants,
 * run for iiBench, the reads on its data and Delete-FIFO: {@code full-small} gives each engine 64 MiB
 * and loads 28 M rows (a 28 M-row queue for the FIFO). Any field can be overridden with a system property
 * {@code bench.<field>}, for example {@code -Dbench.insertRows=50000000}.
 *
 * @param name the preset's name
 * @param budgetBytes each engine's memory budget: cache plus write buffers
 * @param insertRows iiBench rows to insert
 * @param insertMaxSeconds time cap of the iiBench insert; the rate is reported over the rows reached
 * @param fifoQueueRows rows in the FIFO queue (inserted before the measured part)
 * @param fifoChurnRows rows inserted (and as many deleted) in the measured part
 * @param fifoMaxSeconds time cap of the measured FIFO part
 * @param fifoHeadReads reads of the queue's head spread over the measured FIFO part
 * @param lookups point lookups per lookup phase
 * @param shortScans 100-row scans per phase
 * @param mediumScans 10,000-row scans per phase
 * @param compressBytes logical bytes of log rows loaded per codec
 * @param compressMaxSeconds time cap of one compression load
 * @param timeSeriesSteps time steps of the time-series insert, 1,000 rows (one per sensor) each
 * @param timeSeriesMaxSeconds time cap of one time-series insert
 * @param counters counters of the update benchmark's counters phases (all loaded at 0 first)
 * @param counterIncrements increments per counters phase
 * @param updateRows rows of the update benchmark's update_non_index phases (120-byte values)
 * @param updates field updates per update_non_index phase
 * @param updateBatch increments or updates per batch (one transaction, one write batch)
 * @param updateMaxSeconds time cap of each load and each measured part of the update benchmark
 * @param rangeRows rows loaded (8-byte keys, 100-byte values) before each broadcast and range-delete
 *     phase of the update benchmark (its load is capped at {@code updateMaxSeconds})
 * @param rangeGets point gets in the deleted half after a range delete
 */
public record Scale(String name, long budgetBytes, long insertRows, long insertMaxSeconds, long fifoQueueRows,
        long fifoChurnRows, long fifoMaxSeconds, long fifoHeadReads, long lookups, long shortScans, long mediumScans,
        long compressBytes, long compressMaxSeconds, long timeSeriesSteps, long timeSeriesMaxSeconds, long counters,
        long counterIncrements, long updateRows, long updates, long updateBatch, long updateMaxSeconds,
        long rangeRows, long rangeGets) {

    /** The preset {@code name} with any {@code bench.*} system property overrides applied. */
    public static Scale named(String name) {
        Scale s;
        switch (name) {
            case "tiny":
                s = new Scale(name, 32L << 20, 20_000, 60, 10_000, 20_000, 60, 20, 2_000, 200, 5, 2L << 20, 60, 40,
                        60, 5_000, 20_000, 5_000, 20_000, 100, 60, 5_000, 1_000);
                break;
            case "smoke":
                s = new Scale(name, 32L << 20, 60_000, 60, 20_000, 40_000, 60, 40, 5_000, 500, 10, 8L << 20, 60, 100,
                        60, 100_000, 400_000, 50_000, 400_000, 100, 30, 100_000, 10_000);
                break;
            case "smoke-small":
                // betree's smallest cache (8 of its 4 MiB nodes): at this scale the variant only
                // proves that the small-cache runs work.
                s = new Scale(name, 32L << 20, 20_000, 60, 10_000, 20_000, 60, 20, 5_000, 500, 10, 8L << 20, 60, 100,
                        60, 100_000, 400_000, 50_000, 400_000, 100, 30, 100_000, 10_000);
                break;
            case "full":
                // update_non_index: 10.5 M rows of 8 + 120 logical bytes are 1.34 GB, ten times the
                // 128 MiB budget; broadcast and range delete: 10 M rows of 8 + 100 bytes, 1.08 GB.
                s = new Scale(name, 128L << 20, 30_000_000, 600, 10_000_000, 10_000_000, 300, 200, 20_000, 2_000,
                        50, 1L << 30, 300, 10_000, 300, 10_000_000, 10_000_000, 10_500_000, 10_000_000, 100, 180,
                        10_000_000, 10_000);
                break;
            case "full-small":
                s = new Scale(name, 64L << 20, 28_000_000, 600, 28_000_000, 10_000_000, 400, 200, 20_000, 2_000,
                        50, 1L << 30, 300, 10_000, 300, 10_000_000, 10_000_000, 10_500_000, 10_000_000, 100, 180,
                        10_000_000, 10_000);
                break;
            default:
                throw new IllegalArgumentException(
                        "unknown scale '" + name + "'; known: tiny, smoke, smoke-small, full, full-small");
        }
        return new Scale(name, get("budgetBytes", s.budgetBytes), get("insertRows", s.insertRows),
                get("insertMaxSeconds", s.insertMaxSeconds), get("fifoQueueRows", s.fifoQueueRows),
                get("fifoChurnRows", s.fifoChurnRows), get("fifoMaxSeconds", s.fifoMaxSeconds),
                get("fifoHeadReads", s.fifoHeadReads), get("lookups", s.lookups), get("shortScans", s.shortScans),
                get("mediumScans", s.mediumScans), get("compressBytes", s.compressBytes),
                get("compressMaxSeconds", s.compressMaxSeconds), get("timeSeriesSteps", s.timeSeriesSteps),
                get("timeSeriesMaxSeconds", s.timeSeriesMaxSeconds), get("counters", s.counters),
                get("counterIncrements", s.counterIncrements), get("updateRows", s.updateRows),
                get("updates", s.updates), get("updateBatch", s.updateBatch),
                get("updateMaxSeconds", s.updateMaxSeconds), get("rangeRows", s.rangeRows),
                get("rangeGets", s.rangeGets));
    }

    /** This preset's variant: {@code small} for the small-cache presets, empty otherwise. */
    public String variant() {
        return variant(name);
    }

    /** The variant of the preset called {@code name}: what follows its first '-', or empty. */
    public static String variant(String name) {
        int dash = name.indexOf('-');
        return dash < 0 ? "" : name.substring(dash + 1);
    }

    private static long get(String field, long preset) {
        String v = System.getProperty("bench." + field);
        return v == null ? preset : Long.parseLong(v.replace("_", ""));
    }
}

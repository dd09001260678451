package io.betree.internal.cache;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import org.junit.jupiter.api.Test;

/** The eviction target below a cap: the room writers and write-backs get. */
class CacheBudgetTest {
    private static final long MIB = 1L << 20;

    @Test
    void theTargetLeavesAnEighthAtLeastSixteenMibAtMostAQuarter() {
        assertEquals(896 * MIB, new CacheBudget(1024 * MIB).targetBytes(), "an eighth");
        assertEquals(80 * MIB, new CacheBudget(96 * MIB).targetBytes(), "at least 16 MiB");
        assertEquals(48 * MIB, new CacheBudget(64 * MIB).targetBytes(), "a quarter, 16 MiB");
        assertEquals(24 * MIB, new CacheBudget(32 * MIB).targetBytes(), "at most a quarter");
        assertEquals(64 * MIB, new CacheBudget(64 * MIB).capBytes());
    }

    /** Reads alone for a while (no entry changed or added) leave only a sixteenth; a change takes it back. */
    @Test
    void aQuietBudgetLeavesASixteenthUntilAnEntryChanges() {
        long[] now = {1_000};
        CacheBudget budget = new CacheBudget(64 * MIB, () -> now[0]);
        assertEquals(48 * MIB, budget.targetBytes(), "busy at first");
        now[0] += CacheBudget.QUIET_NANOS;
        assertEquals(48 * MIB, budget.targetBytes(), "not yet quiet");
        now[0] += 1;
        assertEquals(60 * MIB, budget.targetBytes(), "quiet");
        budget.changed();
        assertEquals(48 * MIB, budget.targetBytes(), "a change");
        now[0] += CacheBudget.QUIET_NANOS / 32;
        budget.changed(); // too soon after the last to be written
        now[0] += CacheBudget.QUIET_NANOS - CacheBudget.QUIET_NANOS / 32 + 1;
        assertEquals(60 * MIB, budget.targetBytes(), "quiet again, counted from the change written");
    }

    @Test
    void aBudgetMustBePositive() {
        assertThrows(IllegalArgumentException.class, () -> new CacheBudget(0));
        assertThrows(IllegalArgumentException.class, () -> new CacheBudget(-1));
    }
}

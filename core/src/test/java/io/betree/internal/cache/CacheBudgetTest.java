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

    @Test
    void aBudgetMustBePositive() {
        assertThrows(IllegalArgumentException.class, () -> new CacheBudget(0));
        assertThrows(IllegalArgumentException.class, () -> new CacheBudget(-1));
    }
}

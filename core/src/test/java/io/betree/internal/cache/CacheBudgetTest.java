package io.betree.internal.cache;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/** The eviction target below a cap: the writers' room while entries change, less once they stop. */
class CacheBudgetTest {
    private static final long MIB = 1L << 20;

    @Test
    void aQuietBudgetLeavesASixteenthBelowTheCap() {
        assertEquals(60 * MIB, new CacheBudget(64 * MIB).targetBytes());
        assertEquals(960 * MIB, new CacheBudget(1024 * MIB).targetBytes());
    }

    @Test
    void whileEntriesChangeTheWritersRoomIsKept() {
        CacheBudget small = new CacheBudget(64 * MIB);
        small.changed();
        assertEquals(48 * MIB, small.targetBytes(), "at least 16 MiB below the cap");
        CacheBudget tiny = new CacheBudget(32 * MIB);
        tiny.changed();
        assertEquals(24 * MIB, tiny.targetBytes(), "at most a quarter below it");
        CacheBudget large = new CacheBudget(1024 * MIB);
        large.changed();
        assertEquals(896 * MIB, large.targetBytes(), "an eighth");
    }

    @Test
    void theTargetRisesOnceChangesStop() throws InterruptedException {
        CacheBudget budget = new CacheBudget(64 * MIB);
        assertTrue(budget.quiet());
        budget.changed();
        assertFalse(budget.quiet());
        assertEquals(48 * MIB, budget.targetBytes());
        TimeUnit.NANOSECONDS.sleep(CacheBudget.QUIET_NANOS + TimeUnit.MILLISECONDS.toNanos(100));
        assertTrue(budget.quiet());
        assertEquals(60 * MIB, budget.targetBytes());
        budget.changed();
        assertEquals(48 * MIB, budget.targetBytes());
    }

    @Test
    void aBudgetMustBePositive() {
        assertThrows(IllegalArgumentException.class, () -> new CacheBudget(0));
    }
}

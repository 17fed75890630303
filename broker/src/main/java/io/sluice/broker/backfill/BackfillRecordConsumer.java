package io.sluice.broker.backfill;

import io.sluice.exporter.spi.CommittedRecord;

/** Receives committed records in position order. The record is a view valid only during the call. */
@FunctionalInterface
public interface BackfillRecordConsumer
{
    void onRecord(CommittedRecord record) throws Exception;
}

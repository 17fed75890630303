package io.sluice.broker.partition;

import io.sluice.broker.log.codecs.AppendEntryEncoder;
import io.sluice.broker.log.codecs.MessageHeaderEncoder;
import io.sluice.protocol.message.AppendLimits;
import org.agrona.ExpandableArrayBuffer;
import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;

/** The record limits are counted in AppendLimits' record size; an AppendEntry must encode a record in exactly that. */
class AppendEntryRecordSizeTest
{
    @Test
    void aRecordInAnAppendEntryTakesWhatAppendLimitsCounts()
    {
        final ExpandableArrayBuffer buffer = new ExpandableArrayBuffer(256);
        final AppendEntryEncoder empty = new AppendEntryEncoder().wrapAndApplyHeader(buffer, 0, new MessageHeaderEncoder());
        empty.recordsCount(0);
        final int withoutRecords = empty.encodedLength();

        final AppendEntryEncoder encoder = new AppendEntryEncoder().wrapAndApplyHeader(buffer, 0, new MessageHeaderEncoder());
        final byte[] payload = new byte[17];
        encoder.recordsCount(2).next().timestamp(1).key("key").putPayload(payload, 0, payload.length)
            .next().timestamp(2).key("").putPayload(payload, 0, 0);

        assertThat(encoder.encodedLength() - withoutRecords)
            .isEqualTo(AppendLimits.recordBytes(3, 17) + AppendLimits.recordBytes(0, 0));
    }
}

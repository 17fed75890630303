package io.sluice.protocol.message;

import io.sluice.protocol.codecs.AdminRequestEncoder;
import io.sluice.protocol.codecs.AdminRequestKind;
import io.sluice.protocol.codecs.ErrorCode;
import io.sluice.protocol.codecs.ErrorResponseDecoder;
import io.sluice.protocol.codecs.MessageHeaderDecoder;
import io.sluice.protocol.codecs.MessageHeaderEncoder;
import org.agrona.concurrent.UnsafeBuffer;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.nio.ByteOrder;
import java.util.Random;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

@Timeout(10)
class SbeMessagesTest
{
    private final UnsafeBuffer buffer = new UnsafeBuffer(new byte[256]);
    private final int length = new AdminRequestEncoder().wrapAndApplyHeader(buffer, 16, new MessageHeaderEncoder())
        .brokerId(1).partitionId(2).kind(AdminRequestKind.PAUSE_EXPORTING).version(3).encodedLength() +
        MessageHeaderEncoder.ENCODED_LENGTH;

    @Test
    void wellFormedMessageGivesItsTemplateId()
    {
        assertThat(SbeMessages.templateIdOf(buffer, 16, length)).isEqualTo(AdminRequestEncoder.TEMPLATE_ID);
        assertThat(SbeMessages.isMessage(buffer, 16, length, AdminRequestEncoder.TEMPLATE_ID,
            AdminRequestEncoder.BLOCK_LENGTH)).isTrue();
        assertThat(SbeMessages.describe(buffer, 16, length)).contains("template " + AdminRequestEncoder.TEMPLATE_ID);
    }

    @Test
    void truncatedBytesAreRejected()
    {
        for (int cut = 0; cut < length; cut++)
        {
            assertThat(SbeMessages.templateIdOf(buffer, 16, cut)).as("cut at %d", cut).isEqualTo(SbeMessages.NOT_A_MESSAGE);
        }
    }

    @Test
    void foreignSchemaIsRejected()
    {
        buffer.putShort(16 + 4, (short)(MessageHeaderDecoder.SCHEMA_ID + 1), ByteOrder.LITTLE_ENDIAN);
        assertThat(SbeMessages.templateIdOf(buffer, 16, length)).isEqualTo(SbeMessages.NOT_A_MESSAGE);
        assertThat(SbeMessages.describe(buffer, 16, length)).startsWith("not a Sluice message");
    }

    @Test
    void blockLengthPastTheBytesIsRejected()
    {
        buffer.putShort(16, (short)(length - MessageHeaderEncoder.ENCODED_LENGTH + 1), ByteOrder.LITTLE_ENDIAN);
        assertThat(SbeMessages.templateIdOf(buffer, 16, length)).isEqualTo(SbeMessages.NOT_A_MESSAGE);
    }

    @Test
    void shorterBlockThanThisVersionKnowsIsNotTheExpectedMessage()
    {
        buffer.putShort(16, (short)4, ByteOrder.LITTLE_ENDIAN);
        assertThat(SbeMessages.templateIdOf(buffer, 16, length)).isEqualTo(AdminRequestEncoder.TEMPLATE_ID);
        assertThat(SbeMessages.isMessage(buffer, 16, length, AdminRequestEncoder.TEMPLATE_ID,
            AdminRequestEncoder.BLOCK_LENGTH)).isFalse();
    }

    @Test
    void rangesOutsideTheBufferAndNullAreRejectedWithoutThrowing()
    {
        assertThat(SbeMessages.templateIdOf(null, 0, 10)).isEqualTo(SbeMessages.NOT_A_MESSAGE);
        assertThat(SbeMessages.templateIdOf(buffer, -1, 10)).isEqualTo(SbeMessages.NOT_A_MESSAGE);
        assertThat(SbeMessages.templateIdOf(buffer, 250, 10)).isEqualTo(SbeMessages.NOT_A_MESSAGE);
        assertThat(SbeMessages.templateIdOf(buffer, 0, Integer.MAX_VALUE)).isEqualTo(SbeMessages.NOT_A_MESSAGE);
    }

    @Test
    void randomGarbageNeverThrows()
    {
        final Random random = new Random(7);
        final byte[] bytes = new byte[64];
        final UnsafeBuffer garbage = new UnsafeBuffer(bytes);
        int accepted = 0;
        for (int i = 0; i < 10_000; i++)
        {
            random.nextBytes(bytes);
            final int len = random.nextInt(bytes.length + 1);
            final int templateId = SbeMessages.templateIdOf(garbage, 0, len);
            if (templateId != SbeMessages.NOT_A_MESSAGE)
            {
                accepted++;
                assertThat(garbage.getShort(4, ByteOrder.LITTLE_ENDIAN)).isEqualTo((short)MessageHeaderDecoder.SCHEMA_ID);
            }
        }
        assertThat(accepted).as("random bytes rarely carry our schema id").isLessThan(10);
    }

    @Test
    void errorResponseWriterEncodesEveryFieldAndCutsLongMessages()
    {
        final ErrorResponseWriter writer = new ErrorResponseWriter();
        final String longText = "é".repeat(ErrorResponseWriter.MAX_MESSAGE_BYTES);
        writer.set(ErrorCode.UNAVAILABLE, 3, ErrorResponseWriter.NO_LEADER, longText);
        final UnsafeBuffer out = new UnsafeBuffer(new byte[writer.encodedLength() + 8]);
        writer.write(out, 8);

        assertThat(SbeMessages.templateIdOf(out, 8, writer.encodedLength())).isEqualTo(ErrorResponseDecoder.TEMPLATE_ID);
        final ErrorResponseDecoder decoder = new ErrorResponseDecoder().wrapAndApplyHeader(out, 8, new MessageHeaderDecoder());
        assertThat(decoder.code()).isEqualTo(ErrorCode.UNAVAILABLE);
        assertThat(decoder.partitionId()).isEqualTo(3);
        assertThat(decoder.leaderId()).isEqualTo(-1);
        final String message = decoder.message();
        assertThat(message).hasSize(ErrorResponseWriter.MAX_MESSAGE_BYTES / 2).matches("é+");
        assertThat(decoder.encodedLength() + MessageHeaderEncoder.ENCODED_LENGTH).isEqualTo(writer.encodedLength());

        assertThatThrownBy(() -> writer.set(ErrorCode.NULL_VAL, 0, 0, "x")).isInstanceOf(IllegalArgumentException.class);
    }
}

"""The quick start's broker (no Redis): kombu's file-system transport, with each message written
whole before any worker can take it.

kombu's own `_put` opens the message file under its final name and then writes it. A worker polling
the folder can move and read the file in between: it reads an empty message and stops for good
("Unrecoverable error: JSONDecodeError('Expecting value: line 1 column 1 (char 0)')", kombu issue
#1551 shows the same failure). The quick start's worker then takes no more tasks, and no webhook
is sent. A busy machine made this happen in tests/flows/test_quickstart.py.

Here a message is written under a name the worker never takes (it does not end in `.msg`), then
renamed into place. A rename within one folder is atomic, so a worker finds either nothing or
the whole message. gateway.settings names this transport for the file-system broker.
"""
from __future__ import annotations

import os
import time
import uuid

from kombu.exceptions import ChannelError
from kombu.transport import filesystem
from kombu.utils.encoding import str_to_bytes
from kombu.utils.json import dumps


class Channel(filesystem.Channel):
    def _put(self, queue, payload, **kwargs):
        # The name kombu gives a message (its reader sorts by it and takes `<queue>.msg` only).
        name = f"{int(round(time.monotonic() * 1000))}_{uuid.uuid4()}.{queue}.msg"
        final = os.path.join(self.data_folder_out, name)
        partial = final + ".part"
        try:
            with open(partial, "wb") as file:
                file.write(str_to_bytes(dumps(payload)))
            os.replace(partial, final)
        except OSError as exc:
            raise ChannelError(f"Cannot add file {final!r} to directory") from exc


class Transport(filesystem.Transport):
    Channel = Channel

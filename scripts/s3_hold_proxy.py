#!/usr/bin/env python3
"""A TCP proxy in front of an S3 server that holds every multipart part upload: a test's way to
have a worker stuck in the middle of a multipart upload, so that it can be killed there.

    s3_hold_proxy.py UPSTREAM_PORT

Listens on a free port of 127.0.0.1 and prints `listening PORT` once bound. Each connection is
passed through byte for byte to 127.0.0.1:UPSTREAM_PORT (the Host header is not touched, so
SigV4 signatures made for the proxy's address still verify upstream), until the client sends a
request whose bytes hold `partNumber=` (an UploadPart): that request and everything after it on
the connection is never forwarded and never answered, and `held REQUEST-LINE` is printed. The
client sees a part upload that does not end; the upstream server sees the upload created and
no part. Runs until killed.

    s3_hold_proxy.py UPSTREAM_PORT --listen HOST:PORT --pass-all

The S3 endpoint of `make test-cluster`'s store host (scripts/cluster.py): listens on HOST:PORT and
passes every request through, holding none. Killing it takes the endpoint down (connections
refused, those open reset) while moto, behind it, keeps its objects; starting it again brings the
endpoint back with them, as a restarted S3 server with its disks.
"""

import asyncio
import sys


async def pump(reader, writer, hold):
    try:
        while True:
            data = await reader.read(65536)
            if not data:
                break
            if hold and b"partNumber=" in data:
                print("held " + data.split(b"\r\n", 1)[0].decode("latin-1"), flush=True)
                # Read (and drop) until the client goes away; answer nothing.
                while await reader.read(65536):
                    pass
                break
            writer.write(data)
            await writer.drain()
    except (ConnectionError, asyncio.CancelledError):
        pass
    finally:
        writer.close()


async def handle(client_reader, client_writer, upstream_port, hold):
    try:
        upstream_reader, upstream_writer = await asyncio.open_connection("127.0.0.1", upstream_port)
    except OSError:
        client_writer.close()
        return
    await asyncio.gather(
        pump(client_reader, upstream_writer, hold=hold), pump(upstream_reader, client_writer, hold=False)
    )


async def main():
    upstream_port = int(sys.argv[1])
    host, port = "127.0.0.1", 0
    if "--listen" in sys.argv:
        host, _, port = sys.argv[sys.argv.index("--listen") + 1].rpartition(":")
    hold = "--pass-all" not in sys.argv
    server = await asyncio.start_server(lambda r, w: handle(r, w, upstream_port, hold), host, int(port))
    print("listening %d" % server.sockets[0].getsockname()[1], flush=True)
    async with server:
        await server.serve_forever()


if __name__ == "__main__":
    asyncio.run(main())

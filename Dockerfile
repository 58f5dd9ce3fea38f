# The image runs the wheel, as users install it: the scrubber and a line's ingest path
# compiled with mypyc (setup.py), pipelines/ and migrations/ inside the tracelake package.
# The wheel is built in the full Python image (it has the C compiler the slim one lacks);
# the slim image only installs it.
FROM python:3.11 AS build
WORKDIR /src
COPY pyproject.toml setup.py README.md alembic.ini ./
COPY tracelake ./tracelake
COPY pipelines ./pipelines
COPY migrations ./migrations
# TRACELAKE_MYPYC=1: fail the build rather than ship a pure-Python wheel unnoticed
RUN TRACELAKE_MYPYC=1 pip wheel --no-cache-dir --no-deps --wheel-dir /wheels .

FROM python:3.11-slim
COPY --from=build /wheels /wheels
RUN pip install --no-cache-dir "$(ls /wheels/tracelake-*.whl)[demo]" && rm -rf /wheels
# No checkout in the image: alembic.ini, migrations and SQL come from the installed package.
WORKDIR /work
ENTRYPOINT ["tracelake"]

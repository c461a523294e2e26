from .activations import *  # noqa: F401,F403
from .base import Module
from .containers import Sequential
from .dropout import Dropout, Dropout2d, Dropout3d
from .embedding import Embedding
from .linear import Bilinear, Identity, Linear
from .normalization import BatchNorm, GroupNorm, InstanceNorm, LayerNorm, RMSNorm
from .transformer import (
    MultiHeadAttention,
    Transformer,
    TransformerDecoder,
    TransformerDecoderLayer,
    TransformerEncoder,
    TransformerEncoderLayer,
)

from .positional_encoding import ALiBi, RoPE, SinusoidalPositionalEncoding
from .recurrent import GRU, LSTM, RNN
from .pooling import AvgPool1d, AvgPool2d, AvgPool3d, MaxPool1d, MaxPool2d, MaxPool3d
from .upsample import Upsample, upsample_cubic, upsample_linear, upsample_nearest
from .convolution import Conv1d, Conv2d, Conv3d
from .convolution_transpose import ConvTranspose1d, ConvTranspose2d, ConvTranspose3d
from .quantized import QQLinear, QuantizedEmbedding, QuantizedLinear, quantize
from .distributed import (
    AllToShardedLinear,
    FullyShardedModule,
    QuantizedAllToShardedLinear,
    QuantizedShardedToAllLinear,
    ShardedToAllLinear,
    fully_shard,
)

#version 460

#extension GL_KHR_cooperative_matrix : require

void main()
{
}
